// SPDX-License-Identifier: Apache-2.0
// Internal: the scalar dequantization kernels, MLX-CPU rounding, one row range at a time.
// They are the reference: dequantize.cpp compiles them for the baseline ISA, and the x86
// vector path (x86/dequantize_avx2.cpp) compiles them again for AVX2, runs them for the
// cases it does not take (non-finite scales, odd group sizes, a global scale) and is
// tested against them (tests/mlx/mlx_simd_test.cpp).
#pragma once

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "mlx/bitstream.h"
#include "mlx/minifloat.h"
#include "mlx/real_io.h"
#include "safetensors/mlx_quant.h"

namespace safetensors::mlx::detail {

/// Force-inlined into each entry point, so every ISA gets its own copy.
#define ST_MLX_KERNEL [[gnu::always_inline]] inline

inline constexpr std::size_t segment = 256;  // codes unpacked at a time; 256*bits is whole words

/// Stores v, an exact value of S, as O (a cast after computing in S, like MLX's astype).
template <real S, real O>
ST_MLX_KERNEL void emit(std::byte* out, std::size_t i, float v) noexcept {
  if constexpr (O == real::bf16 && S == real::bf16) {
    const auto b = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16);  // exact: no rounding
    std::memcpy(out + 2 * i, &b, 2);
  } else {
    store<O>(out, i, v);
  }
}

/// One affine group: codes [k0, k0 + g) of the row at `wrow`, scale s and bias b (values of S).
template <real S, real O, unsigned Bits>
ST_MLX_KERNEL void affine_group(const std::byte* wrow, unsigned bits, std::size_t g, std::size_t k0, float s, float b,
                                std::byte* orow) noexcept {
  std::array<std::uint8_t, segment> codes{};
  const bool finite = std::isfinite(s) && std::isfinite(b);
  for (std::size_t at = 0; at < g; at += segment) {
    const std::size_t n = std::min(segment, g - at);
    const std::size_t k = k0 + at;
    unpack_segment<Bits>(wrow + k * bits / 8, bits, n, codes.data());
    if constexpr (S == real::bf16) {
      if (finite) {
        // Bit-twiddled bfloat16 rounding, which auto-vectorises.
        for (std::size_t i = 0; i < n; ++i) {
          const float t = std::bit_cast<float>(bf16_round_bits_finite(static_cast<float>(codes[i]) * s));
          emit<S, O>(orow, k + i, std::bit_cast<float>(bf16_round_bits_finite(t + b)));
        }
        continue;
      }
    }
    for (std::size_t i = 0; i < n; ++i) {
      // Two roundings, as MLX's CPU backend: the product rounds to S, then the sum. A NaN
      // product is the result as it is: NaN + NaN keeps either payload, whichever operand
      // order a compiler picks, and the paths (tests/mlx/mlx_simd_test.cpp) must agree.
      const float t = round_to<S>(static_cast<float>(codes[i]) * s);
      const float v = t != t ? t : round_to<S>(t + b);
      emit<S, O>(orow, k + i, v);
    }
  }
}

template <real S, real O, unsigned Bits>
ST_MLX_KERNEL void affine_rows(const quantized_ref& q, std::byte* out, std::uint64_t row_begin,
                               std::uint64_t row_end) noexcept {
  const unsigned bits = q.params.bits;
  const std::size_t g = q.params.group_size;
  const std::size_t cols = q.cols;
  const std::size_t groups_per_row = cols / g;
  const std::size_t row_bytes = cols * bits / 8;
  for (std::uint64_t r = row_begin; r < row_end; ++r) {
    const std::byte* wrow = q.weight.data() + r * row_bytes;
    std::byte* orow = out + r * cols * real_size<O>;
    for (std::size_t grp = 0; grp < groups_per_row; ++grp) {
      const std::size_t gi = r * groups_per_row + grp;
      affine_group<S, O, Bits>(wrow, bits, g, grp * g, load<S>(q.scales.data(), gi), load<S>(q.biases.data(), gi),
                               orow);
    }
  }
}

template <real O>
using out_bits = std::conditional_t<O == real::f32, std::uint32_t, std::uint16_t>;

template <real O>
ST_MLX_KERNEL out_bits<O> to_bits(float v) noexcept {
  if constexpr (O == real::f32) {
    return std::bit_cast<std::uint32_t>(v);
  } else if constexpr (O == real::bf16) {
    return f32_to_bf16(v);
  } else {
    return f32_to_f16(v);
  }
}

/// to_bits(round_to<O>(v)) with bfloat16 done by the branch-free rounding. Only for
/// products of a finite code value and a scale that is never NaN: a NaN can only come from
/// inf * 0, and the default quiet NaN survives that rounding.
template <real O>
ST_MLX_KERNEL out_bits<O> fast_bits(float v) noexcept {
  if constexpr (O == real::bf16) {
    return static_cast<std::uint16_t>(bf16_round_bits_finite(v) >> 16);
  } else {
    return to_bits<O>(round_to<O>(v));
  }
}

/// The group's scale as a float, evaluated the way MLX-CPU does for output O.
template <real O>
ST_MLX_KERNEL float fp_scale(const quantized_ref& q, std::uint8_t byte) noexcept {
  if (q.params.mode == quant_mode::nvfp4) {
    const float e4m3 = e4m3_to_f32(byte);
    if (q.global_scale) return e4m3 * (*q.global_scale / 2688.0F);  // float32, scale product first
    return round_to<O>(e4m3);
  }
  return round_to<O>(e8m0_to_f32(byte));  // 2^(e-127) in O: F16 flushes to 0 / inf
}

/// One fp-mode group of g codes starting at code k0 of the row, with its decoded scale s.
template <real O, quant_mode Mode>
ST_MLX_KERNEL void fp_group(const quantized_ref& q, const std::byte* wrow, std::size_t g, std::size_t k0, float s,
                            std::byte* orow) noexcept {
  constexpr bool fp4 = Mode != quant_mode::mxfp8;
  if constexpr (fp4) {
    std::array<std::uint8_t, segment> codes{};
    unpack_segment<4>(wrow + k0 / 2, 4, g, codes.data());
    if (q.global_scale) {
      for (std::size_t i = 0; i < g; ++i) {
        const auto b = to_bits<O>(fp4_values[codes[i]] * s);  // float32 product, one rounding
        std::memcpy(orow + (k0 + i) * sizeof(b), &b, sizeof(b));
      }
      return;
    }
    for (std::size_t i = 0; i < g; ++i) {
      // E2M1 decoded with integer ops so the loop vectorises: 0/0.5 below the normals.
      const std::uint32_t c = codes[i];
      const std::uint32_t e = (c >> 1) & 3U;
      const std::uint32_t m = c & 1U;
      const std::uint32_t mag = e != 0 ? ((e + 126U) << 23) | (m << 22) : m * 0x3F000000U;
      const auto b = fast_bits<O>(std::bit_cast<float>(mag | ((c & 8U) << 28)) * s);
      std::memcpy(orow + (k0 + i) * sizeof(b), &b, sizeof(b));
    }
  } else {
    for (std::size_t i = 0; i < g; ++i) {
      const auto c = std::to_integer<std::uint8_t>(wrow[k0 + i]);
      const auto b = to_bits<O>(round_to<O>(e4m3_to_f32(c) * s));
      std::memcpy(orow + (k0 + i) * sizeof(b), &b, sizeof(b));
    }
  }
}

/// Mode is a template argument so the group size is a constant (loops unroll fully).
template <real O, quant_mode Mode>
ST_MLX_KERNEL void fp_rows(const quantized_ref& q, std::byte* out, std::uint64_t row_begin,
                           std::uint64_t row_end) noexcept {
  const std::size_t g = default_params(Mode).group_size;
  const std::size_t cols = q.cols;
  const std::size_t groups_per_row = cols / g;
  const std::size_t row_bytes = cols * default_params(Mode).bits / 8;
  const auto* scale_bytes = reinterpret_cast<const std::uint8_t*>(q.scales.data());
  for (std::uint64_t r = row_begin; r < row_end; ++r) {
    const std::byte* wrow = q.weight.data() + r * row_bytes;
    auto* orow = out + r * cols * sizeof(out_bits<O>);
    for (std::size_t grp = 0; grp < groups_per_row; ++grp) {
      fp_group<O, Mode>(q, wrow, g, grp * g, fp_scale<O>(q, scale_bytes[r * groups_per_row + grp]), orow);
    }
  }
}

template <real S, real O>
ST_MLX_KERNEL void affine_bits(const quantized_ref& q, std::byte* out, std::uint64_t b, std::uint64_t e) noexcept {
  switch (q.params.bits) {
    case 4: affine_rows<S, O, 4>(q, out, b, e); break;
    case 8: affine_rows<S, O, 8>(q, out, b, e); break;
    case 2: affine_rows<S, O, 2>(q, out, b, e); break;
    default: affine_rows<S, O, 0>(q, out, b, e); break;
  }
}

template <real S>
ST_MLX_KERNEL void affine_dispatch(const quantized_ref& q, real o, std::byte* out, std::uint64_t b,
                                   std::uint64_t e) noexcept {
  switch (o) {
    case real::f32: affine_bits<S, real::f32>(q, out, b, e); break;
    case real::f16: affine_bits<S, real::f16>(q, out, b, e); break;
    case real::bf16: affine_bits<S, real::bf16>(q, out, b, e); break;
  }
}

template <real O>
ST_MLX_KERNEL void fp_modes(const quantized_ref& q, std::byte* out, std::uint64_t b, std::uint64_t e) noexcept {
  switch (q.params.mode) {
    case quant_mode::mxfp4: fp_rows<O, quant_mode::mxfp4>(q, out, b, e); break;
    case quant_mode::mxfp8: fp_rows<O, quant_mode::mxfp8>(q, out, b, e); break;
    case quant_mode::nvfp4: fp_rows<O, quant_mode::nvfp4>(q, out, b, e); break;
    case quant_mode::affine: break;
  }
}

/// Rows [b, e) of a checked tensor into `dst` (output type o).
ST_MLX_KERNEL void scalar_rows(const quantized_ref& q, real o, std::byte* dst, std::uint64_t b,
                               std::uint64_t e) noexcept {
  if (q.params.mode == quant_mode::affine) {
    switch (real_of(q.scale_type)) {
      case real::f32: affine_dispatch<real::f32>(q, o, dst, b, e); break;
      case real::f16: affine_dispatch<real::f16>(q, o, dst, b, e); break;
      case real::bf16: affine_dispatch<real::bf16>(q, o, dst, b, e); break;
    }
    return;
  }
  switch (o) {
    case real::f32: fp_modes<real::f32>(q, dst, b, e); break;
    case real::f16: fp_modes<real::f16>(q, dst, b, e); break;
    case real::bf16: fp_modes<real::bf16>(q, dst, b, e); break;
  }
}

}  // namespace safetensors::mlx::detail
