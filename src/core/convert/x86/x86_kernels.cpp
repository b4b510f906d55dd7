// SPDX-License-Identifier: Apache-2.0
// x86 kernels: F16 <-> float with F16C, the shared loops built for AVX2 (the table decode
// with gathers), F32 -> BF16 with AVX-512F and AVX512_BF16. Each function carries its own
// target attribute, so the library stays baseline x86-64; callers choose at run time
// through the has_*() probes. Compiled only for x86 targets without SAFETENSORS_PORTABLE
// (src/CMakeLists.txt); portable/scalar_kernels.cpp stands in everywhere else.
#include <cstring>

#include "convert/kernels.h"
#include "convert/loops.h"

#if !defined(__x86_64__) && !defined(__i386__)
#error "x86 kernels built for a non-x86 target: see SAFETENSORS_PORTABLE in src/CMakeLists.txt"
#endif

#include <cpuid.h>
#include <immintrin.h>

namespace safetensors::detail {

namespace {

// The OS saves the YMM registers (XCR0 bits 1 and 2) and the CPU has AVX.
bool os_supports_avx() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  const bool avx = (ecx & (1U << 28)) != 0;
  const bool osxsave = (ecx & (1U << 27)) != 0;
  if (!avx || !osxsave) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 6U) == 6U;
}

}  // namespace

bool has_f16c() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ecx & (1U << 29)) != 0 && os_supports_avx();
}

bool has_avx512() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0 || (ebx & (1U << 16)) == 0) return false;
  if (!os_supports_avx()) return false;
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 0xE6U) == 0xE6U;  // YMM plus opmask and both ZMM halves
}

bool has_avx512_bf16() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 1, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (eax & (1U << 5)) != 0 && has_avx512();
}

bool has_avx2() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid_count(7, 0, &eax, &ebx, &ecx, &edx) == 0) return false;
  return (ebx & (1U << 5)) != 0 && os_supports_avx();
}

__attribute__((target("avx,f16c"))) void f16_to_f32_f16c(const std::byte* src, float* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i + 16));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(a));
    _mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(b));
  }
  f16_to_f32_portable(src + 2 * i, dst + i, n - i);
}

__attribute__((target("avx,f16c"))) void f32_to_f16_f16c(const float* src, std::byte* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    const __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(src + i + 8), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i + 16), b);
  }
  f32_to_f16_portable(src + i, dst + 2 * i, n - i);
}

__attribute__((target("avx2"))) void bf16_to_f32_avx2(const std::byte* src, float* dst, std::size_t n) noexcept {
  bf16_to_f32_loop(src, dst, n);
}

namespace {

// f32_to_bf16 on 8 lanes: round to nearest even, NaN -> quiet NaN; result in the low 16 bits.
__attribute__((target("avx2"))) __m256i bf16_round8(__m256i u) noexcept {
  const __m256i lsb = _mm256_and_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(1));
  const __m256i bias = _mm256_add_epi32(_mm256_set1_epi32(0x7FFF), lsb);
  const __m256i rounded = _mm256_srli_epi32(_mm256_add_epi32(u, bias), 16);
  const __m256i magnitude = _mm256_and_si256(u, _mm256_set1_epi32(0x7FFFFFFF));
  const __m256i is_nan = _mm256_cmpgt_epi32(magnitude, _mm256_set1_epi32(0x7F800000));
  const __m256i quiet = _mm256_or_si256(_mm256_srli_epi32(u, 16), _mm256_set1_epi32(0x40));
  return _mm256_blendv_epi8(rounded, quiet, is_nan);
}

}  // namespace

__attribute__((target("avx2"))) void f32_to_bf16_avx2(const float* src, std::byte* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m256i a = bf16_round8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i)));
    const __m256i b = bf16_round8(_mm256_loadu_si256(reinterpret_cast<const __m256i*>(src + i + 8)));
    // packus interleaves 128-bit lanes (a0-3 b0-3 a4-7 b4-7); the permute restores order.
    const __m256i packed = _mm256_permute4x64_epi64(_mm256_packus_epi32(a, b), 0xD8);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), packed);
  }
  f32_to_bf16_loop(src + i, dst + 2 * i, n - i);
}

// g++ 12's AVX-512 headers trip -Wmaybe-uninitialized on _mm512_undefined (GCC PR 105593).
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wmaybe-uninitialized"
#endif

// As f32_to_bf16_avx2 on 16 lanes: the NaN fix-up is a masked OR, the narrowing one vpmovdw.
__attribute__((target("avx512f"))) void f32_to_bf16_avx512(const float* src, std::byte* dst, std::size_t n) noexcept {
  std::size_t i = 0;
  const __m512i one = _mm512_set1_epi32(1);
  const __m512i half = _mm512_set1_epi32(0x7FFF);
  const __m512i abs_mask = _mm512_set1_epi32(0x7FFFFFFF);
  const __m512i inf = _mm512_set1_epi32(0x7F800000);
  const __m512i quiet_bit = _mm512_set1_epi32(0x40);
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_loadu_si512(src + i);
    const __m512i high = _mm512_srli_epi32(u, 16);
    const __m512i bias = _mm512_add_epi32(half, _mm512_and_si512(high, one));
    const __m512i rounded = _mm512_srli_epi32(_mm512_add_epi32(u, bias), 16);
    const __mmask16 is_nan = _mm512_cmpgt_epu32_mask(_mm512_and_si512(u, abs_mask), inf);
    const __m512i result = _mm512_mask_or_epi32(rounded, is_nan, high, quiet_bit);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(dst + 2 * i), _mm512_cvtepi32_epi16(result));
  }
  f32_to_bf16_loop(src + i, dst + 2 * i, n - i);
}

// The AVX512_BF16 instruction rounds like f32_to_bf16 and quiets NaN the same way, but
// treats float32 subnormal inputs as zero; blocks holding one take the integer path.
__attribute__((target("avx512f,avx512bf16"))) void f32_to_bf16_avx512bf16(const float* src, std::byte* dst,
                                                                          std::size_t n) noexcept {
  std::size_t i = 0;
  const __m512i exp_mask = _mm512_set1_epi32(0x7F800000);
  const __m512i mant_mask = _mm512_set1_epi32(0x007FFFFF);
  for (; i + 16 <= n; i += 16) {
    const __m512i u = _mm512_loadu_si512(src + i);
    if ((_mm512_testn_epi32_mask(u, exp_mask) & _mm512_test_epi32_mask(u, mant_mask)) != 0) {
      f32_to_bf16_loop(src + i, dst + 2 * i, 16);
      continue;
    }
    const __m256bh packed = _mm512_cvtneps_pbh(_mm512_castsi512_ps(u));
    std::memcpy(dst + 2 * i, &packed, sizeof packed);
  }
  f32_to_bf16_loop(src + i, dst + 2 * i, n - i);
}

#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif

__attribute__((target("avx2"))) void table_decode_avx2(const float* table, const std::byte* src, float* dst,
                                                       std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i bytes = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i));
    const __m256i lo = _mm256_cvtepu8_epi32(bytes);
    const __m256i hi = _mm256_cvtepu8_epi32(_mm_unpackhi_epi64(bytes, bytes));
    _mm256_storeu_ps(dst + i, _mm256_i32gather_ps(table, lo, 4));
    _mm256_storeu_ps(dst + i + 8, _mm256_i32gather_ps(table, hi, 4));
  }
  table_loop(table, src + i, dst + i, n - i);
}

}  // namespace safetensors::detail
