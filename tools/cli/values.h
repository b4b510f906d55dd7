// SPDX-License-Identifier: Apache-2.0
// Decoding chunks of tensor bytes to numbers for stats and diff.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/dtype.h"
#include "safetensors/error.h"

namespace st_cli {

/// Decodes a chunk of whole elements of `type` into `out` (resized). C64 decodes as its
/// float32 components (real, imaginary, ...), so it yields two values per element.
[[nodiscard]] safetensors::status decode_values(safetensors::dtype type, std::span<const std::byte> chunk,
                                                std::vector<double>& out);

}  // namespace st_cli
