// SPDX-License-Identifier: Apache-2.0
// MLX's CPU quantizers (affine since v0.23.2, and the fp-mode ops fallback), bit for bit.
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "mlx/bitstream.h"
#include "mlx/checks.h"
#include "mlx/minifloat.h"
#include "mlx/parallel.h"
#include "mlx/real_io.h"
#include "safetensors/mlx_quant.h"

namespace safetensors::mlx {
namespace {

using detail::real;

/// One affine group, all in float32 (the algorithm of MLX's affine_quantize fallback).
template <real T>
void affine_group(const std::byte* in, std::size_t base, std::size_t g, unsigned bits, std::uint8_t* codes,
                  float& scale, float& bias) {
  float mn = INFINITY;
  float mx = -INFINITY;
  for (std::size_t i = 0; i < g; ++i) {
    const float w = detail::load<T>(in, base + i);
    mn = std::fmin(mn, w);  // fmin/fmax skip NaN elements
    mx = std::fmax(mx, w);
  }
  const auto n_bins = static_cast<float>((1U << bits) - 1U);
  float s = std::fmax((mx - mn) / n_bins, 1e-7F);
  float edge = mn;
  if (!(std::fabs(mn) > std::fabs(mx))) {  // the max side dominates, ties included: negative scale
    s = -s;
    edge = mx;
  }
  const float q0 = std::nearbyint(edge / s);
  float b = 0.0F;
  if (q0 != 0.0F) {
    s = edge / q0;
    b = edge;
  }
  for (std::size_t i = 0; i < g; ++i) {
    const float w = detail::load<T>(in, base + i);
    const float q = std::nearbyint((w - b) / s);
    codes[i] = q >= n_bins ? static_cast<std::uint8_t>(n_bins) : q > 0.0F ? static_cast<std::uint8_t>(q) : 0;
  }
  scale = s;
  bias = b;
}

/// Nearest FP4 code by |y - value| evaluated in T; ties go to the lowest index (argmin).
template <real T>
std::uint8_t nearest_fp4(float y) noexcept {
  std::uint8_t best = 0;
  float best_d = std::fabs(detail::round_to<T>(y - detail::fp4_values[0]));
  for (std::uint8_t c = 1; c < 16; ++c) {
    const float d = std::fabs(detail::round_to<T>(y - detail::fp4_values[c]));
    if (d < best_d) {
      best_d = d;
      best = c;
    }
  }
  return best;
}

/// One fp-mode group (MLX's fp_quantize ops fallback, computed in the input dtype T).
template <real T>
void fp_group(const std::byte* in, std::size_t base, const quant_params& p, std::optional<float> global_scale,
              std::uint8_t* codes, std::uint8_t& scale_byte) {
  const std::size_t g = p.group_size;
  float amax = 0.0F;
  for (std::size_t i = 0; i < g; ++i) amax = std::fmax(amax, std::fabs(detail::load<T>(in, base + i)));
  const float maxval = p.mode == quant_mode::mxfp8 ? 448.0F : 6.0F;
  const float sdec = detail::round_to<T>(amax / maxval);
  float divisor = 1.0F;
  if (global_scale) {
    // nvfp4 with a global scale: the group scale and the elements leave T for float32
    // (MLX's type promotion with the float32 global scale).
    const float factor = 2688.0F / *global_scale;
    scale_byte = detail::f32_to_e4m3(sdec * factor);
    divisor = detail::e4m3_to_f32(scale_byte);
    for (std::size_t i = 0; i < g; ++i) {
      const float y = detail::round_to<T>(detail::load<T>(in, base + i) / divisor) * factor;
      codes[i] = nearest_fp4<real::f32>(y);
    }
    return;
  }
  if (p.mode == quant_mode::nvfp4) {
    scale_byte = detail::f32_to_e4m3(sdec);
    divisor = detail::e4m3_to_f32(scale_byte);
  } else {
    int k = 0;
    if (sdec != 0.0F) {
      const float l = std::nearbyint(detail::round_to<T>(std::log2(sdec)));
      k = static_cast<int>(std::fmin(127.0F, std::fmax(-127.0F, l)));
    }
    scale_byte = static_cast<std::uint8_t>(k + 127);
    divisor = detail::round_to<T>(std::ldexp(1.0F, k));
  }
  for (std::size_t i = 0; i < g; ++i) {
    const float y = detail::round_to<T>(detail::load<T>(in, base + i) / divisor);
    codes[i] = p.mode == quant_mode::mxfp8 ? detail::f32_to_e4m3(y) : nearest_fp4<T>(y);
  }
}

template <real T>
void quantize_rows(const std::byte* in, std::uint64_t cols, const quant_params& p, std::optional<float> global_scale,
                   const quantized_out& out, std::uint64_t row_begin, std::uint64_t row_end) {
  const std::size_t g = p.group_size;
  const std::size_t groups_per_row = cols / g;
  std::array<std::uint8_t, 128> codes{};
  for (std::uint64_t r = row_begin; r < row_end; ++r) {
    for (std::size_t grp = 0; grp < groups_per_row; ++grp) {
      const std::size_t gi = r * groups_per_row + grp;
      const std::size_t base = gi * g;
      if (p.mode == quant_mode::affine) {
        float s = 0;
        float b = 0;
        affine_group<T>(in, base, g, p.bits, codes.data(), s, b);
        detail::store<T>(out.scales.data(), gi, s);
        detail::store<T>(out.biases.data(), gi, b);
      } else {
        std::uint8_t sb = 0;
        fp_group<T>(in, base, p, global_scale, codes.data(), sb);
        out.scales[gi] = std::byte{sb};
      }
      detail::pack_segment(codes.data(), p.bits, g, out.weight.data() + base * p.bits / 8);
    }
  }
}

}  // namespace

status quantize(dtype in_type, std::span<const std::byte> in, std::uint64_t rows, std::uint64_t cols,
                const quant_params& params, const quantized_out& out, const kernel_options& options,
                std::optional<float> nvfp4_global_scale) {
  if (auto s = check_quantize_params(params); !s) return s;
  if (nvfp4_global_scale && params.mode != quant_mode::nvfp4) {
    return make_error(error_code::invalid_argument, "only nvfp4 takes a global scale");
  }
  if (!detail::is_real(in_type)) {
    return make_error(error_code::invalid_argument,
                      fmt::format("only F32, F16 and BF16 tensors can be quantized, not {}", dtype_name(in_type)));
  }
  auto sizes = detail::sizes_for(params, rows, cols);
  if (!sizes) return std::move(sizes).err();
  const std::uint64_t in_bytes = sizes->elements * (dtype_bits(in_type) / 8);
  const dtype st = scale_dtype_for(params.mode, in_type);
  const std::uint64_t scale_bytes = sizes->groups * (dtype_bits(st) / 8);
  const bool affine = params.mode == quant_mode::affine;
  if (in.size() != in_bytes) return detail::size_error("input", in_bytes, in.size());
  if (out.weight.size() != sizes->weight_bytes)
    return detail::size_error("weight", sizes->weight_bytes, out.weight.size());
  if (out.scales.size() != scale_bytes) return detail::size_error("scales", scale_bytes, out.scales.size());
  if (out.biases.size() != (affine ? scale_bytes : 0)) {
    return detail::size_error("biases", affine ? scale_bytes : 0, out.biases.size());
  }
  const std::byte* src = in.data();
  const real t = detail::real_of(in_type);
  detail::parallel_rows(rows, sizes->elements * 4, options.threads, [&](std::uint64_t b, std::uint64_t e) {
    switch (t) {
      case real::f32: quantize_rows<real::f32>(src, cols, params, nvfp4_global_scale, out, b, e); break;
      case real::f16: quantize_rows<real::f16>(src, cols, params, nvfp4_global_scale, out, b, e); break;
      case real::bf16: quantize_rows<real::bf16>(src, cols, params, nvfp4_global_scale, out, b, e); break;
    }
  });
  return {};
}

}  // namespace safetensors::mlx
