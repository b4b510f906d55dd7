// SPDX-License-Identifier: Apache-2.0
/// \file gguf_dequantize.h
/// Decoding ggml tensor data to float32: plain types (F32, F16, BF16, F64, I8..I64)
/// and the block-quantized Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q8_1, Q2_K, Q3_K, Q4_K, Q5_K,
/// Q6_K and Q8_K, with ggml's reference formulas (block scales are IEEE binary16, Q8_K's
/// is float32). Other types give `unsupported` naming the type.
#pragma once

#include <cstddef>
#include <span>

#include "safetensors/error.h"
#include "safetensors/formats/gguf_types.h"

namespace safetensors::gguf {

/// Decodes `src`, whole blocks of `type`, into `dst`, one float per element.
/// `dst.size()` must be a multiple of the block's elements and `src.size()` exactly the
/// bytes of that many blocks (invalid_argument otherwise). I64 and F64 round to nearest.
[[nodiscard]] status dequantize(ggml_type type, std::span<const std::byte> src, std::span<float> dst);

}  // namespace safetensors::gguf
