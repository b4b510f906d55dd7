// SPDX-License-Identifier: Apache-2.0
// Loop bodies shared by the portable kernels and the x86 ones: each is compiled once
// for the baseline target and once inside an AVX2 function, where it vectorises wider.
#pragma once

#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstring>

namespace safetensors::detail {

[[gnu::always_inline]] inline std::uint16_t load_u16(const std::byte* p) noexcept {
  std::uint16_t v = 0;
  std::memcpy(&v, p, sizeof v);
  return v;
}

[[gnu::always_inline]] inline void store_u16(std::byte* p, std::uint16_t v) noexcept { std::memcpy(p, &v, sizeof v); }

[[gnu::always_inline]] inline void bf16_to_f32_loop(const std::byte* src, float* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i)
    dst[i] = std::bit_cast<float>(static_cast<std::uint32_t>(load_u16(src + 2 * i)) << 16);
}

// f32_to_bf16 of convert.h with its NaN test turned into a select, so it vectorises.
[[gnu::always_inline]] inline void f32_to_bf16_loop(const float* src, std::byte* dst, std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) {
    const std::uint32_t u = std::bit_cast<std::uint32_t>(src[i]);
    const std::uint32_t rounded = (u + 0x7FFFU + ((u >> 16) & 1U)) >> 16;
    const std::uint32_t quiet_nan = (u >> 16) | 0x40U;
    store_u16(dst + 2 * i, static_cast<std::uint16_t>((u & 0x7FFFFFFFU) > 0x7F800000U ? quiet_nan : rounded));
  }
}

template <class Out>
[[gnu::always_inline]] inline void table_loop(const Out* table, const std::byte* src, Out* dst,
                                              std::size_t n) noexcept {
  for (std::size_t i = 0; i < n; ++i) dst[i] = table[std::to_integer<std::uint8_t>(src[i])];
}

}  // namespace safetensors::detail
