// SPDX-License-Identifier: Apache-2.0
// Internal: size and dtype checks shared by the MLX dequantize and quantize kernels.
#pragma once

#include <cstdint>
#include <optional>

#include "safetensors/mlx_quant.h"

namespace safetensors::mlx::detail {

/// Byte sizes implied by rows, cols and the parameters (overflow-checked).
struct quant_sizes {
  std::uint64_t elements = 0;      ///< rows * cols
  std::uint64_t weight_bytes = 0;  ///< rows * cols * bits / 8
  std::uint64_t groups = 0;        ///< rows * cols / g
};

/// Checks that cols splits into whole groups and that nothing overflows.
[[nodiscard]] result<quant_sizes> sizes_for(const quant_params& p, std::uint64_t rows, std::uint64_t cols);

/// "expected N bytes, got M" as an InvalidArgument error about `what`.
[[nodiscard]] error size_error(std::string_view what, std::uint64_t expected, std::uint64_t got);

}  // namespace safetensors::mlx::detail
