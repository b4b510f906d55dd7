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
#include "safetensors/minifloat.h"  // IWYU pragma: export

namespace safetensors {

/// bfloat16 bits to float32 (exact, a plain shift: NaN payloads pass unchanged).
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

/// IEEE binary16 bits to float32 (exact). A NaN keeps its sign and payload and comes
/// out quiet, as the F16C instruction gives it.
[[nodiscard]] inline float f16_to_f32(std::uint16_t bits) noexcept {
  const std::uint32_t sign = static_cast<std::uint32_t>(bits & 0x8000U) << 16;
  const std::uint32_t exp = (bits >> 10) & 0x1FU;
  const std::uint32_t mant = bits & 0x3FFU;
  if (exp == 0x1F) return std::bit_cast<float>(sign | 0x7F800000U | (mant << 13) | (mant != 0 ? 0x400000U : 0U));
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
  /// Integer and BOOL targets: report an out-of-range or NaN input as an error
  /// (invalid_argument naming the element index and value). Without it the value is
  /// truncated toward zero and clamped to the type's range, NaN giving 0 (BOOL: x != 0).
  bool check_range = false;
  /// F8_E4M3, F8_E5M2 and the FNUZ types: finite overflow and Inf give the largest
  /// finite value of the input's sign (the OCP "saturating" mode) instead of torch's
  /// NaN / Inf. NaN stays NaN. F6 and F4 always saturate; F8_E8M0 ignores it.
  bool saturate = false;
};

/// Decodes `src` (packed elements of `from`) into `dst`, one float per element.
/// `src.size()` must be exactly the bytes of `dst.size()` elements of `from`
/// (F4: an even count; F6: a multiple of 4). F4 element 0 is the low nibble of byte 0;
/// F6 is an LSB-first bit stream (element 0 in the low 6 bits of byte 0). C64 is
/// rejected (invalid_argument): decode its bytes as F32 to get (real, imag) pairs.
/// F64, I32/U32 and I64/U64 round to the nearest float.
[[nodiscard]] status decode_to_f32(dtype from, std::span<const std::byte> src, std::span<float> dst);
/// As decode_to_f32, into float64 (exact for every type but U64/I64 beyond 2^53).
[[nodiscard]] status decode_to_f64(dtype from, std::span<const std::byte> src, std::span<double> dst);
/// Encodes float32 values as `to` (round to nearest even, per-format saturation; see
/// encode_options and docs/dtypes.md). C64 is rejected; NaN input for F6/F4, which have
/// no NaN, is an invalid_argument error naming the element.
[[nodiscard]] status encode_from_f32(dtype to, std::span<const float> src, std::span<std::byte> dst,
                                     const encode_options& options = {});

}  // namespace safetensors
