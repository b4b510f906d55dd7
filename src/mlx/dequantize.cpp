// SPDX-License-Identifier: Apache-2.0
// Dequantization of MLX affine and fp-mode tensors with MLX-CPU rounding, row-parallel:
// the checks, the dispatch between the scalar reference (dequantize_rows.h, compiled here
// for the baseline ISA) and the vector path (mlx/kernels.h), and the thread split.
#include <fmt/format.h>

#include "mlx/checks.h"
#include "mlx/dequantize_rows.h"
#include "mlx/kernels.h"
#include "mlx/parallel.h"
#include "mlx/real_io.h"
#include "safetensors/mlx_quant.h"

namespace safetensors::mlx {

namespace detail {

void dequantize_rows_scalar(const quantized_ref& q, real o, std::byte* dst, std::uint64_t begin,
                            std::uint64_t end) noexcept {
  scalar_rows(q, o, dst, begin, end);
}

}  // namespace detail

namespace {

using detail::real;

using rows_fn = void (*)(const quantized_ref&, real, std::byte*, std::uint64_t, std::uint64_t) noexcept;

rows_fn pick_rows_fn() noexcept {
  return detail::has_vector_dequantize() ? detail::dequantize_rows_vector : detail::dequantize_rows_scalar;
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
