// SPDX-License-Identifier: Apache-2.0
/// \file convert.h
/// Element conversions between every dtype and float32 / float64: exact scalar codecs
/// for the 16-bit floats here, bulk span kernels for all types (see docs/dtypes.md for
/// each format's NaN, infinity, subnormal and saturation rules).
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <span>

#include "safetensors/dtype.h"
#include "safetensors/error.h"

namespace safetensors {

/// bfloat16 bits to float32 (exact).
[[nodiscard]] inline float bf16_to_f32(std::uint16_t bits) noexcept {
  return std::bit_cast<float>(static_cast<std::uint32_t>(bits) << 16);
}

/// float32 to bfloat16 bits, round to nearest even; NaN stays a quiet NaN of the same sign.
[[nodiscard]] inline std::uint16_t f32_to_bf16(float value) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  if ((u & 0x7FFFFFFFU) > 0x7F800000U) return static_cast<std::uint16_t>((u >> 16) | 0x0040U);
  const std::uint32_t rounding = 0x7FFFU + ((u >> 16) & 1U);
  return static_cast<std::uint16_t>((u + rounding) >> 16);
}

/// IEEE binary16 bits to float32 (exact).
[[nodiscard]] inline float f16_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1FU;
  const std::uint32_t mant = bits & 0x3FFU;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000U | (mant << 13));
  if (exp == 0) {
    // Zero or subnormal: mant * 2^-24, exact in float32.
    const float magnitude = static_cast<float>(mant) * 0x1p-24F;
    return sign != 0 ? -magnitude : magnitude;
  }
  return std::bit_cast<float>(sign | ((exp + 112U) << 23) | (mant << 13));
}

/// float32 to IEEE binary16 bits, round to nearest even; overflow gives infinity, NaN a quiet NaN.
[[nodiscard]] inline std::uint16_t f32_to_f16(float value) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const auto sign = static_cast<std::uint16_t>((u >> 16) & 0x8000U);
  const std::uint32_t a = u & 0x7FFFFFFFU;
  if (a > 0x7F800000U) return static_cast<std::uint16_t>(sign | 0x7E00U | ((a >> 13) & 0x3FFU));
  if (a >= 0x477FF000U) return static_cast<std::uint16_t>(sign | 0x7C00U);  // rounds to >= 65520: infinity
  if (a < 0x38800000U) {
    // Result is subnormal or zero: scale so the float adds round to the 2^-24 grid (RNE).
    const float scaled = std::bit_cast<float>(a) + 0.5F;  // 0.5 = 2^-1: ulp 2^-24 after the add
    return static_cast<std::uint16_t>(sign | (std::bit_cast<std::uint32_t>(scaled) - 0x3F000000U));
  }
  const std::uint32_t rounding = 0xFFFU + ((a >> 13) & 1U);
  return static_cast<std::uint16_t>(sign | ((a - 0x38000000U + rounding) >> 13));
}

/// How encode_from_f32 treats values the target cannot hold.
struct encode_options {
  /// Integer targets: report out-of-range or NaN inputs as an error instead of the C++
  /// conversion's wraparound. Float targets always follow their format's saturation rule.
  bool check_range = false;
};

/// Decodes `src` (packed elements of `from`, any dtype except C64) into `dst`, one
/// float per element. `dst.size()` must be the element count that `src.size()` holds.
[[nodiscard]] status decode_to_f32(dtype from, std::span<const std::byte> src, std::span<float> dst);
/// As decode_to_f32, into float64 (exact for every type but U64/I64 beyond 2^53).
[[nodiscard]] status decode_to_f64(dtype from, std::span<const std::byte> src, std::span<double> dst);
/// Encodes float32 values as `to` (round to nearest even, per-format saturation).
[[nodiscard]] status encode_from_f32(dtype to, std::span<const float> src, std::span<std::byte> dst,
                                     const encode_options& options = {});

}  // namespace safetensors
