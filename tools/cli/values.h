// SPDX-License-Identifier: Apache-2.0
// Decoding chunks of tensor bytes to numbers for stats and diff, and re-encoding for cast.
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

/// Converts a chunk of whole elements from one float dtype to another into `out`
/// (resized). Goes through float32, or float64 when the target is F64.
[[nodiscard]] safetensors::status convert_chunk(safetensors::dtype from, safetensors::dtype to,
                                                std::span<const std::byte> chunk, std::vector<float>& scratch32,
                                                std::vector<double>& scratch64, std::vector<std::byte>& out,
                                                const safetensors::encode_options& options = {});

/// True for the dtypes `cast` converts: floating point, complex excluded.
[[nodiscard]] bool castable(safetensors::dtype t);

}  // namespace st_cli
