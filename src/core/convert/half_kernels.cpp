// SPDX-License-Identifier: Apache-2.0
// Bulk BF16 and F16 <-> float kernels: plain loops the compiler vectorises, with the
// x86 versions (AVX2 loops, F16C instructions) chosen at run time when the CPU has them.
#include <bit>
#include <cstring>

#include "convert/kernels.h"
#include "convert/loops.h"
#include "safetensors/convert.h"

namespace safetensors::detail {
namespace {

// Branch-free binary16 -> binary32 (select-only, so it vectorises).
float f16_bits_to_f32(std::uint16_t h) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(h & 0x8000U) << 16;
  const std::uint32_t em = h & 0x7FFFU;
  const std::uint32_t shifted = em << 13;
  const std::uint32_t exp = em & 0x7C00U;
  // Inf/NaN: exponent to 255, and a NaN comes out quiet (as F16C does it).
  const std::uint32_t special = (shifted + (224U << 23)) | (em > 0x7C00U ? 0x400000U : 0U);
  const std::uint32_t normal = exp == 0x7C00U ? special : shifted + (112U << 23);
  // Subnormal: put the mantissa under exponent 2^-14 and subtract 2^-14 (exact).
  const float sub = std::bit_cast<float>(shifted + (113U << 23)) - 0x1p-14F;
  const std::uint32_t mag = exp == 0 ? std::bit_cast<std::uint32_t>(sub) : normal;
  return std::bit_cast<float>(sign | mag);
}

}  // namespace

void bf16_to_f32(const std::byte* src, float* dst, std::size_t n) noexcept {
  static const bool fast = has_avx2();
  if (fast) {
    bf16_to_f32_avx2(src, dst, n);
  } else {
    bf16_to_f32_loop(src, dst, n);
  }
}

void bf16_to_f64(const std::byte* src, double* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<double>(safetensors::bf16_to_f32(load_u16(src + 2 * i)));
}

void f32_to_bf16(const float* src, std::byte* dst, std::size_t n) noexcept {
  static const int level = has_avx512_bf16() ? 3 : has_avx512() ? 2 : has_avx2() ? 1 : 0;
  if (level == 3) {
    f32_to_bf16_avx512bf16(src, dst, n);
  } else if (level == 2) {
    f32_to_bf16_avx512(src, dst, n);
  } else if (level == 1) {
    f32_to_bf16_avx2(src, dst, n);
  } else {
    f32_to_bf16_loop(src, dst, n);
  }
}

void f16_to_f32_portable(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = f16_bits_to_f32(load_u16(src + 2 * i));
}

void f32_to_f16_portable(const float* src, std::byte* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) store_u16(dst + 2 * i, safetensors::f32_to_f16(src[i]));
}

void f16_to_f64(const std::byte* src, double* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = static_cast<double>(f16_bits_to_f32(load_u16(src + 2 * i)));
}

void f16_to_f32(const std::byte* src, float* dst, std::size_t n) noexcept {
  static const bool fast = has_f16c();
  if (fast) {
    f16_to_f32_f16c(src, dst, n);
  } else {
    f16_to_f32_portable(src, dst, n);
  }
}

void f32_to_f16(const float* src, std::byte* dst, std::size_t n) noexcept {
  static const bool fast = has_f16c();
  if (fast) {
    f32_to_f16_f16c(src, dst, n);
  } else {
    f32_to_f16_portable(src, dst, n);
  }
}

}  // namespace safetensors::detail
