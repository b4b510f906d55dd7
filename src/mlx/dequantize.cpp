// SPDX-License-Identifier: Apache-2.0
// Dequantization of MLX affine and fp-mode tensors with MLX-CPU rounding, row-parallel.
#include <array>
#include <cmath>
#include <type_traits>

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

constexpr std::size_t segment = 256;  // codes unpacked at a time; 256*bits is whole words

/// Stores v, an exact value of S, as O (a cast after computing in S, like MLX's astype).
template <real S, real O>
inline void emit(std::byte* out, std::size_t i, float v) noexcept {
  if constexpr (O == real::bf16 && S == real::bf16) {
    const auto b = static_cast<std::uint16_t>(std::bit_cast<std::uint32_t>(v) >> 16);  // exact: no rounding
    std::memcpy(out + 2 * i, &b, 2);
  } else {
    detail::store<O>(out, i, v);
  }
}

// The kernels are force-inlined into two entry points: one for the baseline ISA and, on
// x86-64, one compiled for AVX2 and picked at run time (wider vectors, and the 32->16-bit
// packs SSE2 lacks). Both compute exactly the same values.
#define ST_KERNEL [[gnu::always_inline]] inline

template <real S, real O, unsigned Bits>
ST_KERNEL void affine_rows(const quantized_ref& q, std::byte* out, std::uint64_t row_begin, std::uint64_t row_end) {
  const unsigned bits = q.params.bits;
  const std::size_t g = q.params.group_size;
  const std::size_t cols = q.cols;
  const std::size_t groups_per_row = cols / g;
  const std::size_t row_bytes = cols * bits / 8;
  std::array<std::uint8_t, segment> codes{};
  for (std::uint64_t r = row_begin; r < row_end; ++r) {
    const std::byte* wrow = q.weight.data() + r * row_bytes;
    std::byte* orow = out + r * cols * detail::real_size<O>;
    for (std::size_t grp = 0; grp < groups_per_row; ++grp) {
      const std::size_t gi = r * groups_per_row + grp;
      const float s = detail::load<S>(q.scales.data(), gi);
      const float b = detail::load<S>(q.biases.data(), gi);
      const bool finite = std::isfinite(s) && std::isfinite(b);
      for (std::size_t at = 0; at < g; at += segment) {
        const std::size_t n = std::min(segment, g - at);
        const std::size_t k0 = grp * g + at;
        detail::unpack_segment<Bits>(wrow + k0 * bits / 8, bits, n, codes.data());
        if constexpr (S == real::bf16) {
          if (finite) {
            // Fast path: bit-twiddled bfloat16 rounding, which vectorises.
            for (std::size_t i = 0; i < n; ++i) {
              const float t = std::bit_cast<float>(detail::bf16_round_bits_finite(static_cast<float>(codes[i]) * s));
              emit<S, O>(orow, k0 + i, std::bit_cast<float>(detail::bf16_round_bits_finite(t + b)));
            }
            continue;
          }
        }
        for (std::size_t i = 0; i < n; ++i) {
          // Two roundings, as MLX's CPU backend: the product rounds to S, then the sum.
          const float t = detail::round_to<S>(static_cast<float>(codes[i]) * s);
          const float v = detail::round_to<S>(t + b);
          emit<S, O>(orow, k0 + i, v);
        }
      }
    }
  }
}

template <real O>
using out_bits = std::conditional_t<O == real::f32, std::uint32_t, std::uint16_t>;

template <real O>
inline out_bits<O> to_bits(float v) noexcept {
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
inline out_bits<O> fast_bits(float v) noexcept {
  if constexpr (O == real::bf16) {
    return static_cast<std::uint16_t>(detail::bf16_round_bits_finite(v) >> 16);
  } else {
    return to_bits<O>(detail::round_to<O>(v));
  }
}

/// The group's scale as a float, evaluated the way MLX-CPU does for output O.
template <real O>
inline float fp_scale(const quantized_ref& q, std::uint8_t byte) noexcept {
  if (q.params.mode == quant_mode::nvfp4) {
    const float e4m3 = detail::e4m3_to_f32(byte);
    if (q.global_scale) return e4m3 * (*q.global_scale / 2688.0F);  // float32, scale product first
    return detail::round_to<O>(e4m3);
  }
  return detail::round_to<O>(detail::e8m0_to_f32(byte));  // 2^(e-127) in O: F16 flushes to 0 / inf
}

/// Mode is a template argument so the group size is a constant (loops unroll fully).
template <real O, quant_mode Mode>
ST_KERNEL void fp_rows(const quantized_ref& q, std::byte* out, std::uint64_t row_begin, std::uint64_t row_end) {
  const std::size_t g = q.params.group_size;
  constexpr bool fp4 = Mode != quant_mode::mxfp8;
  const std::size_t cols = q.cols;
  const std::size_t groups_per_row = cols / g;
  const std::size_t row_bytes = cols * default_params(Mode).bits / 8;
  const auto* scale_bytes = reinterpret_cast<const std::uint8_t*>(q.scales.data());
  std::array<std::uint8_t, segment> codes{};
  for (std::uint64_t r = row_begin; r < row_end; ++r) {
    const std::byte* wrow = q.weight.data() + r * row_bytes;
    auto* orow = out + r * cols * sizeof(out_bits<O>);
    for (std::size_t grp = 0; grp < groups_per_row; ++grp) {
      const float s = fp_scale<O>(q, scale_bytes[r * groups_per_row + grp]);
      const std::size_t k0 = grp * g;
      if (fp4) {
        detail::unpack_segment<4>(wrow + k0 / 2, 4, g, codes.data());
        if (q.global_scale) {
          for (std::size_t i = 0; i < g; ++i) {
            const auto b = to_bits<O>(detail::fp4_values[codes[i]] * s);  // float32 product, one rounding
            std::memcpy(orow + (k0 + i) * sizeof(b), &b, sizeof(b));
          }
          continue;
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
          const auto b = to_bits<O>(detail::round_to<O>(detail::e4m3_to_f32(c) * s));
          std::memcpy(orow + (k0 + i) * sizeof(b), &b, sizeof(b));
        }
      }
    }
  }
}

template <real S, real O>
ST_KERNEL void affine_bits(const quantized_ref& q, std::byte* out, std::uint64_t b, std::uint64_t e) {
  switch (q.params.bits) {
    case 4: affine_rows<S, O, 4>(q, out, b, e); break;
    case 8: affine_rows<S, O, 8>(q, out, b, e); break;
    case 2: affine_rows<S, O, 2>(q, out, b, e); break;
    default: affine_rows<S, O, 0>(q, out, b, e); break;
  }
}

template <real S>
ST_KERNEL void affine_dispatch(const quantized_ref& q, real o, std::byte* out, std::uint64_t b, std::uint64_t e) {
  switch (o) {
    case real::f32: affine_bits<S, real::f32>(q, out, b, e); break;
    case real::f16: affine_bits<S, real::f16>(q, out, b, e); break;
    case real::bf16: affine_bits<S, real::bf16>(q, out, b, e); break;
  }
}

template <real O>
ST_KERNEL void fp_modes(const quantized_ref& q, std::byte* out, std::uint64_t b, std::uint64_t e) {
  switch (q.params.mode) {
    case quant_mode::mxfp4: fp_rows<O, quant_mode::mxfp4>(q, out, b, e); break;
    case quant_mode::mxfp8: fp_rows<O, quant_mode::mxfp8>(q, out, b, e); break;
    case quant_mode::nvfp4: fp_rows<O, quant_mode::nvfp4>(q, out, b, e); break;
    case quant_mode::affine: break;
  }
}

ST_KERNEL void run_rows(const quantized_ref& q, real o, std::byte* dst, std::uint64_t b, std::uint64_t e) {
  if (q.params.mode == quant_mode::affine) {
    switch (detail::real_of(q.scale_type)) {
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

void run_rows_baseline(const quantized_ref& q, real o, std::byte* dst, std::uint64_t b, std::uint64_t e) {
  run_rows(q, o, dst, b, e);
}

#if defined(__x86_64__) && defined(__GNUC__)
[[gnu::target("avx2")]] void run_rows_avx2(const quantized_ref& q, real o, std::byte* dst, std::uint64_t b,
                                           std::uint64_t e) {
  run_rows(q, o, dst, b, e);
}
#endif

using rows_fn = void (*)(const quantized_ref&, real, std::byte*, std::uint64_t, std::uint64_t);

rows_fn pick_rows_fn() noexcept {
#if defined(__x86_64__) && defined(__GNUC__)
  if (__builtin_cpu_supports("avx2")) return run_rows_avx2;
#endif
  return run_rows_baseline;
}

status check_ref(const quantized_ref& q, dtype out_type, std::size_t out_size) {
  if (auto s = check_dequantize_params(q.params); !s) return s;
  if (!detail::is_real(out_type)) {
    return make_error(error_code::invalid_argument,
                      fmt::format("output dtype must be F32, F16 or BF16, not {}", dtype_name(out_type)));
  }
  const bool affine = q.params.mode == quant_mode::affine;
  if (affine && !detail::is_real(q.scale_type)) {
    return make_error(error_code::invalid_argument,
                      fmt::format("affine scales must be F32, F16 or BF16, not {}", dtype_name(q.scale_type)));
  }
  if (!affine && q.scale_type != dtype::U8) {
    return make_error(error_code::invalid_argument,
                      fmt::format("{} scales must be U8, not {}", mode_name(q.params.mode), dtype_name(q.scale_type)));
  }
  if (q.global_scale && q.params.mode != quant_mode::nvfp4) {
    return make_error(error_code::invalid_argument, "only nvfp4 takes a global scale");
  }
  auto sizes = detail::sizes_for(q.params, q.rows, q.cols);
  if (!sizes) return std::move(sizes).err();
  const std::uint64_t scale_bytes = sizes->groups * (dtype_bits(q.scale_type) / 8);
  if (q.weight.size() != sizes->weight_bytes) return detail::size_error("weight", sizes->weight_bytes, q.weight.size());
  if (q.scales.size() != scale_bytes) return detail::size_error("scales", scale_bytes, q.scales.size());
  if (affine && q.biases.size() != scale_bytes) return detail::size_error("biases", scale_bytes, q.biases.size());
  if (!affine && !q.biases.empty()) {
    return make_error(error_code::invalid_argument, fmt::format("{} has no biases", mode_name(q.params.mode)));
  }
  const std::uint64_t want = sizes->elements * (dtype_bits(out_type) / 8);
  if (out_size != want) return detail::size_error("output", want, out_size);
  return {};
}

}  // namespace

dtype default_output_dtype(const quantized_ref& q) noexcept {
  return q.params.mode == quant_mode::affine ? q.scale_type : dtype::BF16;
}

status dequantize(const quantized_ref& q, dtype out_type, std::span<std::byte> out, const kernel_options& options) {
  if (auto s = check_ref(q, out_type, out.size()); !s) return s;
  const real o = detail::real_of(out_type);
  static const rows_fn rows = pick_rows_fn();
  std::byte* dst = out.data();
  const std::function<void(std::uint64_t, std::uint64_t)> body = [&q, o, dst](std::uint64_t b, std::uint64_t e) {
    rows(q, o, dst, b, e);
  };
  detail::parallel_rows(q.rows, q.rows * q.cols, options.threads, body);
  return {};
}

}  // namespace safetensors::mlx
