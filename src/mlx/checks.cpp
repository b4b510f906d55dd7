// SPDX-License-Identifier: Apache-2.0
// Size arithmetic and checks for the MLX kernels.
#include "mlx/checks.h"

#include <fmt/format.h>

namespace safetensors::mlx::detail {

result<quant_sizes> sizes_for(const quant_params& p, std::uint64_t rows, std::uint64_t cols) {
  if (p.group_size == 0 || cols % p.group_size != 0) {
    return make_error(error_code::invalid_argument,
                      fmt::format("group size {} does not divide the row length {}", p.group_size, cols));
  }
  quant_sizes s;
  if (__builtin_mul_overflow(rows, cols, &s.elements) || s.elements > (UINT64_MAX / 8)) {
    return make_error(error_code::validation_overflow, fmt::format("{} rows of {} elements overflow", rows, cols));
  }
  s.weight_bytes = s.elements * p.bits / 8;
  s.groups = s.elements / p.group_size;
  return s;
}

error size_error(std::string_view what, std::uint64_t expected, std::uint64_t got) {
  return make_error(error_code::invalid_argument, fmt::format("{} has {} bytes, expected {}", what, got, expected));
}

}  // namespace safetensors::mlx::detail
