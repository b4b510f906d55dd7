// SPDX-License-Identifier: Apache-2.0
// The MLX section of `inspect`: quantized layers with bits, group size, mode and size.
#pragma once

#include <string>

#include "safetensors/header.h"

namespace st_cli {

/// Prints the quantized layers of `h` (config.json beside `path` is read when present).
/// Prints nothing for files without quantized layers; problems become one line, not a failure.
void print_mlx_summary(const std::string& path, const safetensors::header& h);

}  // namespace st_cli
