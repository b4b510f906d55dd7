// SPDX-License-Identifier: Apache-2.0
// F16 <-> float with the x86 F16C instructions (8 lanes per step), compiled for that
// target only inside these functions and chosen at run time by has_f16c().
#include "convert/kernels.h"

#if defined(__x86_64__) || defined(__i386__)
#include <cpuid.h>
#include <immintrin.h>
#endif

namespace safetensors::convert_detail {

#if defined(__x86_64__) || defined(__i386__)

bool has_f16c() noexcept {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  if (__get_cpuid(1, &eax, &ebx, &ecx, &edx) == 0) return false;
  const bool f16c = (ecx & (1U << 29)) != 0;
  const bool avx = (ecx & (1U << 28)) != 0;
  const bool osxsave = (ecx & (1U << 27)) != 0;
  if (!f16c || !avx || !osxsave) return false;
  // The OS must save the YMM registers (XCR0 bits 1 and 2).
  unsigned lo = 0, hi = 0;
  __asm__("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
  return (lo & 6U) == 6U;
}

__attribute__((target("avx,f16c"))) void f16_to_f32_f16c(const std::byte* src, float* dst,
                                                          std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i));
    const __m128i b = _mm_loadu_si128(reinterpret_cast<const __m128i*>(src + 2 * i + 16));
    _mm256_storeu_ps(dst + i, _mm256_cvtph_ps(a));
    _mm256_storeu_ps(dst + i + 8, _mm256_cvtph_ps(b));
  }
  f16_to_f32_portable(src + 2 * i, dst + i, n - i);
}

__attribute__((target("avx,f16c"))) void f32_to_f16_f16c(const float* src, std::byte* dst,
                                                          std::size_t n) noexcept {
  std::size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    const __m128i a = _mm256_cvtps_ph(_mm256_loadu_ps(src + i), _MM_FROUND_TO_NEAREST_INT);
    const __m128i b = _mm256_cvtps_ph(_mm256_loadu_ps(src + i + 8), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i), a);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + 2 * i + 16), b);
  }
  f32_to_f16_portable(src + i, dst + 2 * i, n - i);
}

#else

bool has_f16c() noexcept { return false; }
void f16_to_f32_f16c(const std::byte* src, float* dst, std::size_t n) noexcept { f16_to_f32_portable(src, dst, n); }
void f32_to_f16_f16c(const float* src, std::byte* dst, std::size_t n) noexcept { f32_to_f16_portable(src, dst, n); }

#endif

}  // namespace safetensors::convert_detail
