// SPDX-License-Identifier: Apache-2.0
// Internal: the small float formats of MLX's fp modes, on top of the public codecs of
// safetensors/minifloat.h, with the few places where MLX's conventions differ from torch's.
#pragma once

#include <array>
#include <bit>
#include <cstdint>
#include <limits>

#include "safetensors/minifloat.h"

namespace safetensors::mlx::detail {

/// FP4 E2M1 code (bit 3 = sign) to its value, as a table for the kernels' inner loops.
inline constexpr std::array<float, 16> fp4_values = [] {
  std::array<float, 16> t{};
  for (std::uint8_t c = 0; c < 16; ++c) t[c] = f4_to_f32(c);
  return t;
}();

/// E4M3 byte to float as MLX decodes it: like F8_E4M3, except that MLX has no NaN code and
/// reads 0x7F / 0xFF as +-480 (the exponent-15, mantissa-7 pattern taken literally).
inline float e4m3_to_f32(std::uint8_t b) noexcept {
  if ((b & 0x7FU) == 0x7FU) return (b & 0x80U) != 0 ? -480.0F : 480.0F;
  return f8_e4m3_to_f32(b);
}

/// float to E4M3 as MLX's to_fp8: F8_E4M3 saturating at +-448 (Inf too), except that NaN
/// gives 0x7E / 0xFE (448 with NaN's sign), not the NaN code.
inline std::uint8_t f32_to_e4m3(float x) noexcept {
  if (x != x) return static_cast<std::uint8_t>(((std::bit_cast<std::uint32_t>(x) >> 24) & 0x80U) | 0x7EU);
  return f32_to_f8_e4m3(x, true);
}

/// E8M0 byte to float as MLX decodes it: F8_E8M0 (2^(e-127), 0 = 2^-127), except that 255
/// gives +inf (the exponent field taken literally) where torch reads NaN.
inline float e8m0_to_f32(std::uint8_t e) noexcept {
  return e == 0xFF ? std::numeric_limits<float>::infinity() : f8_e8m0_to_f32(e);
}

}  // namespace safetensors::mlx::detail
