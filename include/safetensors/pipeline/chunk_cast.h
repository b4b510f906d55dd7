// SPDX-License-Identifier: Apache-2.0
// Casting tensor bytes between floating dtypes a chunk at a time, as `cast` and the dtype
// option of every pipeline do: through float32, or float64 when the target is F64; and
// decoding chunks to numbers for comparisons and statistics.
#pragma once

#include <cstddef>
#include <span>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/dtype.h"
#include "safetensors/error.h"

namespace safetensors::pipeline {

/// True for the dtypes a cast converts: floating point, complex excluded.
[[nodiscard]] bool castable(dtype t) noexcept;

/// Decodes a chunk of whole elements of `type` into `out` (resized), one double per value:
/// what diff and the tools' stats compare and sum. C64 decodes as its float32 components
/// (real, imaginary, ...), so it yields two values per element.
[[nodiscard]] status decode_values(dtype type, std::span<const std::byte> chunk, std::vector<double>& out);

/// Converts chunks of whole elements, reusing its scratch memory from chunk to chunk.
class chunk_caster {
 public:
  /// `chunk` (whole elements of `from`) as `to` in `out` (resized).
  [[nodiscard]] status cast(dtype from, dtype to, std::span<const std::byte> chunk, std::vector<std::byte>& out,
                            const encode_options& options = {});

 private:
  std::vector<float> f32_;
  std::vector<double> f64_;
};

}  // namespace safetensors::pipeline
