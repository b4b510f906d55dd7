// SPDX-License-Identifier: Apache-2.0
// Internal: copies of tensor bytes that stay fast whatever the alignment of source and
// destination, for file::read_range (the loader's reads).
//
// Two costs measured on this project's AMD EPYC machine (docs/performance.md, "Load paths"):
// - The string instruction `rep movsb`, which the kernel's copy_to_user and glibc's memcpy
//   use for copies from a few KiB up to the L2 size, runs at a third of its speed when the
//   destination lies 1 to 31 bytes past the source modulo 64 (2.5 GB/s against 7 GB/s
//   for 256 KiB copies). A loader cannot choose where a tensor lies in the file against its
//   destination.
// - Copies larger than the caches that use ordinary stores read every destination line
//   before writing it (3 streams of memory traffic instead of 2): a pread(2) into a resident
//   destination reaches 4.6 GB/s where memcpy with non-temporal stores reaches 8 GB/s, and
//   glibc's memcpy takes its non-temporal path only for congruent addresses (2.5-3.3 GB/s
//   otherwise).
// So large reads go through a bounce buffer that stays in L2 (the kernel's copy into it is
// congruent) and then to the destination with non-temporal stores; smaller incongruent
// ones are shifted with a plain vector loop.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

#if defined(__x86_64__) || defined(_M_X64)
#include <emmintrin.h>
#endif

namespace safetensors::detail {

/// Below this size copies go to memcpy whatever their alignment: its short paths do not
/// use the string instruction.
inline constexpr std::size_t shifted_copy_threshold = std::size_t{16} << 10;
/// From this size on, copies bypass the caches (the data is larger than what a copy
/// would usefully leave in them).
inline constexpr std::size_t stream_copy_threshold = std::size_t{1} << 20;

/// True when `destination` lies 1 to 31 bytes past `source` (a file offset or an address)
/// modulo 64: the slow case of `rep movsb`.
[[nodiscard]] inline bool incongruent(const void* destination, std::uint64_t source) noexcept {
  const auto shift = (reinterpret_cast<std::uintptr_t>(destination) - source) & 63U;
  return shift != 0 && shift < 32;
}

/// memcpy without the string instruction: 64 bytes per step with unaligned vector moves
/// (the fixed-size memcpy compiles to them), then the tail.
inline void shifted_copy(std::byte* destination, const std::byte* source, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) std::memcpy(destination + i, source + i, 64);
  if (i < n) std::memcpy(destination + i, source + i, n - i);
}

/// memcpy with non-temporal stores where the target has them (x86-64: SSE2, every such
/// CPU): the destination's lines are written without being read first. Ends with a store
/// fence, so the bytes are visible to other threads like memcpy's.
inline void stream_copy(std::byte* destination, const std::byte* source, std::size_t n) noexcept {
#if defined(__x86_64__) || defined(_M_X64)
  std::size_t head = (64 - (reinterpret_cast<std::uintptr_t>(destination) & 63U)) & 63U;
  if (head > n) head = n;
  if (head > 0) std::memcpy(destination, source, head);
  destination += head;
  source += head;
  n -= head;
  std::size_t i = 0;
  for (; i + 64 <= n; i += 64) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i + 16));
    const __m128i c = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i + 32));
    const __m128i d = _mm_loadu_si128(reinterpret_cast<const __m128i*>(source + i + 48));
    _mm_stream_si128(reinterpret_cast<__m128i*>(destination + i), a);
    _mm_stream_si128(reinterpret_cast<__m128i*>(destination + i + 16), b);
    _mm_stream_si128(reinterpret_cast<__m128i*>(destination + i + 32), c);
    _mm_stream_si128(reinterpret_cast<__m128i*>(destination + i + 48), d);
  }
  _mm_sfence();
  if (i < n) std::memcpy(destination + i, source + i, n - i);
#else
  std::memcpy(destination, source, n);
#endif
}

/// The copy for `n` bytes from `source` to `destination` (memory to memory).
inline void copy_bytes(std::byte* destination, const std::byte* source, std::size_t n) noexcept {
  if (n >= stream_copy_threshold) {
    stream_copy(destination, source, n);
  } else if (n >= shifted_copy_threshold && incongruent(destination, reinterpret_cast<std::uintptr_t>(source))) {
    shifted_copy(destination, source, n);
  } else if (n > 0) {
    std::memcpy(destination, source, n);
  }
}

}  // namespace safetensors::detail
