// SPDX-License-Identifier: Apache-2.0
// Internal: the LSB-first code bitstream of MLX packed weights, one row segment at a time.
// Segments start on a word boundary and hold n codes with n*bits a multiple of 32.
#pragma once

#include <cstddef>
#include <cstdint>

#include "mlx/real_io.h"

namespace safetensors::mlx::detail {

/// Reads n codes of `bits` (1..8) from the words at `src` into `codes`. `Bits` fixes the
/// width at compile time (2, 4 or 8) for the common cases; 0 means "use `bits`".
template <unsigned Bits = 0>
[[gnu::always_inline]] inline void unpack_segment(const std::byte* src, unsigned bits, std::size_t n,
                                                  std::uint8_t* codes) noexcept {
  if constexpr (Bits == 4 || Bits == 2) {
    // Byte-wise: code 0 sits in the low bits of byte 0 (little-endian words).
    constexpr unsigned per_byte = 8 / Bits;
    constexpr unsigned mask = (1U << Bits) - 1U;
    const auto* bytes = reinterpret_cast<const std::uint8_t*>(src);
    for (std::size_t i = 0; i < n / per_byte; ++i) {
      const unsigned x = bytes[i];
      for (unsigned j = 0; j < per_byte; ++j)
        codes[i * per_byte + j] = static_cast<std::uint8_t>((x >> (j * Bits)) & mask);
    }
    return;
  } else if constexpr (Bits != 0) {
    constexpr unsigned per_word = 32 / Bits;
    constexpr std::uint32_t mask = (1U << Bits) - 1U;
    for (std::size_t w = 0; w < n / per_word; ++w) {
      const std::uint32_t x = load_u32(src + 4 * w);
      for (unsigned j = 0; j < per_word; ++j) {
        codes[w * per_word + j] = static_cast<std::uint8_t>((x >> (j * Bits)) & mask);
      }
    }
    return;
  }
  const std::uint32_t mask = (1U << bits) - 1U;
  if (bits == 2 || bits == 4 || bits == 8) {
    const unsigned per_word = 32 / bits;
    for (std::size_t w = 0; w < n / per_word; ++w) {
      const std::uint32_t x = load_u32(src + 4 * w);
      for (unsigned j = 0; j < per_word; ++j) {
        codes[w * per_word + j] = static_cast<std::uint8_t>((x >> (j * bits)) & mask);
      }
    }
    return;
  }
  std::uint64_t buffer = 0;
  unsigned have = 0;
  std::size_t word = 0;
  for (std::size_t k = 0; k < n; ++k) {
    if (have < bits) {
      buffer |= static_cast<std::uint64_t>(load_u32(src + 4 * word++)) << have;
      have += 32;
    }
    codes[k] = static_cast<std::uint8_t>(buffer & mask);
    buffer >>= bits;
    have -= bits;
  }
}

/// Writes n codes (each below 2^bits) as n*bits/32 words at `dst`.
inline void pack_segment(const std::uint8_t* codes, unsigned bits, std::size_t n, std::byte* dst) noexcept {
  std::uint64_t buffer = 0;
  unsigned have = 0;
  std::size_t word = 0;
  for (std::size_t k = 0; k < n; ++k) {
    buffer |= static_cast<std::uint64_t>(codes[k]) << have;
    have += bits;
    if (have >= 32) {
      store_u32(dst + 4 * word++, static_cast<std::uint32_t>(buffer));
      buffer >>= 32;
      have -= 32;
    }
  }
}

}  // namespace safetensors::mlx::detail
