// SPDX-License-Identifier: Apache-2.0
// Internal: the small float formats of MLX's fp modes with MLX's exact conventions:
// FP4 E2M1 values, FP8 E4M3 (decoded the way MLX does, 0x7F = 480) and E8M0 scales.
#pragma once

#include <bit>
#include <cmath>
#include <cstdint>

namespace safetensors::mlx::detail {

/// FP4 E2M1 code (bit 3 = sign) to its value.
inline constexpr float fp4_values[16] = {0.0F,  0.5F,  1.0F,  1.5F,  2.0F,  3.0F,  4.0F,  6.0F,
                                         -0.0F, -0.5F, -1.0F, -1.5F, -2.0F, -3.0F, -4.0F, -6.0F};

/// E4M3 byte to float as MLX decodes it: bias 7, subnormals m*2^-9, 0x7F/0xFF = +-480.
inline float e4m3_to_f32(std::uint8_t b) noexcept {
  const std::uint32_t e = (b >> 3) & 0xFU;
  const std::uint32_t m = b & 7U;
  const float mag = e == 0 ? static_cast<float>(m) * 0x1p-9F : std::bit_cast<float>(((e + 120U) << 23) | (m << 20));
  return (b & 0x80U) != 0 ? -mag : mag;
}

/// float to E4M3: round to nearest even, saturating at 448 (inf too); NaN keeps its sign
/// as 0x7E / 0xFE (MLX's to_fp8).
inline std::uint8_t f32_to_e4m3(float x) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  const auto sign = static_cast<std::uint8_t>((u >> 24) & 0x80U);
  const std::uint32_t a = u & 0x7FFFFFFFU;
  if (a > 0x7F800000U) return static_cast<std::uint8_t>(sign | 0x7EU);
  const float mag = std::bit_cast<float>(a);
  if (mag >= 448.0F) return static_cast<std::uint8_t>(sign | 0x7EU);
  if (mag < 0x1p-6F) {
    // Subnormal grid of 2^-9: mag * 512 is exact; 8 becomes the smallest normal (0x08).
    return static_cast<std::uint8_t>(sign | static_cast<std::uint8_t>(std::nearbyint(mag * 512.0F)));
  }
  // Keep 3 mantissa bits with round to nearest even; a carry moves into the exponent.
  const std::uint32_t rounded = (a + 0x7FFFFU + ((a >> 20) & 1U)) >> 20;
  return static_cast<std::uint8_t>(sign | (rounded - (120U << 3)));
}

/// E8M0 byte to float as MLX decodes it: 2^(e-127), with e = 255 giving +inf.
inline float e8m0_to_f32(std::uint8_t e) noexcept {
  // Exponent field e is 2^(e-127) for 1..254 and +inf for 255; e = 0 is the subnormal 2^-127.
  return std::bit_cast<float>(e == 0 ? 0x00400000U : static_cast<std::uint32_t>(e) << 23);
}

}  // namespace safetensors::mlx::detail
