// SPDX-License-Identifier: Apache-2.0
// The MLX section of `inspect`: quantized layers with bits, group size, mode and size.
#pragma once

#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "safetensors/header.h"

namespace st_cli {

/// Prints the quantized layers of `h` (config.json beside `path` is read when present).
/// Prints nothing for files without quantized layers; problems become one line, not a failure.
void print_mlx_summary(const std::string& path, const safetensors::header& h);

/// Parameter counts that differ from a tensor's element count, by tensor name: an MLX
/// quantized weight counts its logical elements (rows x in, not packed U32 words), its
/// scales and biases none (as mlx-lm counts parameters). Empty for unquantized files.
using param_overrides = std::map<std::string, std::uint64_t, std::less<>>;
[[nodiscard]] param_overrides logical_param_overrides(const std::string& path, const safetensors::header& h);

/// The parameters `t` stands for: its override, else its element count.
[[nodiscard]] std::uint64_t param_count(const param_overrides& overrides, const safetensors::tensor_info& t);

}  // namespace st_cli
