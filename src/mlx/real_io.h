// SPDX-License-Identifier: Apache-2.0
// Internal: loads, stores and round-to-nearest-even into the three float dtypes the
// MLX kernels compute in, over unaligned little-endian bytes.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

#include "safetensors/convert.h"
#include "safetensors/dtype.h"

namespace safetensors::mlx::detail {

static_assert(std::endian::native == std::endian::little, "the MLX kernels assume a little-endian host");

enum class real : std::uint8_t { f32, f16, bf16 };

constexpr bool is_real(dtype t) noexcept { return t == dtype::F32 || t == dtype::F16 || t == dtype::BF16; }
constexpr real real_of(dtype t) noexcept {
  return t == dtype::F32 ? real::f32 : t == dtype::F16 ? real::f16 : real::bf16;
}
template <real R>
constexpr std::size_t real_size = R == real::f32 ? 4 : 2;

inline std::uint32_t load_u32(const std::byte* p) noexcept {
  std::uint32_t v;
  std::memcpy(&v, p, 4);
  return v;
}
inline void store_u32(std::byte* p, std::uint32_t v) noexcept { std::memcpy(p, &v, 4); }

/// bfloat16 rounding of a finite (or infinite) float, without the NaN case: vectorises.
inline std::uint32_t bf16_round_bits_finite(float x) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(x);
  return (u + 0x7FFFU + ((u >> 16) & 1U)) & 0xFFFF0000U;
}

/// x rounded to nearest even in R, returned as float.
template <real R>
[[gnu::always_inline]] inline float round_to(float x) noexcept {
  if constexpr (R == real::f32) {
    return x;
  } else if constexpr (R == real::bf16) {
    return bf16_to_f32(f32_to_bf16(x));
  } else {
    return f16_to_f32(f32_to_f16(x));
  }
}

/// Element i of an array of R.
template <real R>
[[gnu::always_inline]] inline float load(const std::byte* base, std::size_t i) noexcept {
  if constexpr (R == real::f32) {
    float v;
    std::memcpy(&v, base + 4 * i, 4);
    return v;
  } else {
    std::uint16_t b;
    std::memcpy(&b, base + 2 * i, 2);
    if constexpr (R == real::bf16) {
      return bf16_to_f32(b);
    } else {
      return f16_to_f32(b);
    }
  }
}

/// Stores x rounded to R (exact when x is already an R value).
template <real R>
[[gnu::always_inline]] inline void store(std::byte* base, std::size_t i, float x) noexcept {
  if constexpr (R == real::f32) {
    std::memcpy(base + 4 * i, &x, 4);
  } else {
    const std::uint16_t b = R == real::bf16 ? f32_to_bf16(x) : f32_to_f16(x);
    std::memcpy(base + 2 * i, &b, 2);
  }
}

}  // namespace safetensors::mlx::detail
