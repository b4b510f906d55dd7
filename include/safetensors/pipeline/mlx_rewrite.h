// SPDX-License-Identifier: Apache-2.0
// MLX quantization of whole checkpoints: `dequantize` turns every quantized layer into a plain
// `P.weight` (scales and biases dropped) and copies the rest; `quantize` writes the MLX layout
// (P.weight as U32 codes, P.scales, P.biases) with MLX's CPU quantizer. Both stream in row
// chunks (bounded memory, whatever the size), read a single file or a sharded checkpoint (then
// the output is a checkpoint directory, the index's extra metadata kept), check every output
// before writing, and write atomically. The CLI's `quantize`/`dequantize` and Python call them.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/error.h"
#include "safetensors/mlx_quant.h"
#include "safetensors/pipeline/tensor_filter.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

struct dequantize_options {
  /// F32, F16 or BF16; nullopt: MLX's choice (the scales' dtype for affine layers, BF16 for fp modes).
  std::optional<dtype> to;
  std::uint64_t max_shard_bytes = default_max_shard_bytes;  ///< sharded input: largest output shard
  std::uint64_t max_output_bytes = 0;                       ///< the output budget (output_check.h); 0: the default
  progress_callback progress;                               ///< input bytes consumed / total; returning false cancels
  warning_handler on_warning;                               ///< what describing the layers found questionable
};

struct quantize_options {
  mlx::quant_params params = mlx::default_params(mlx::quant_mode::affine);
  tensor_filter select;    ///< which float `*.weight` tensors are quantized (all that can be, by default)
  std::string config_out;  ///< when set: an mlx-lm style config.json fragment is written there
  std::uint64_t max_shard_bytes = default_max_shard_bytes;
  std::uint64_t max_output_bytes = 0;  ///< the output budget (output_check.h); 0: the default
  progress_callback progress;
};

struct mlx_rewrite_summary {
  std::size_t layers = 0;   ///< quantized layers read (dequantize) or written (quantize)
  std::size_t tensors = 0;  ///< tensors written
  bool sharded = false;     ///< the output is a checkpoint directory
  std::vector<std::string> warnings;
};

/// `in` (a file, a checkpoint directory or an index; config.json beside it is read) into `out`.
[[nodiscard]] result<mlx_rewrite_summary> dequantize(const std::string& in, const std::string& out,
                                                     const dequantize_options& options = {});
/// The same for an opened checkpoint (a remote one included); `in_path` is how it was named.
[[nodiscard]] result<mlx_rewrite_summary> dequantize(checkpoint in, const std::string& in_path, const std::string& out,
                                                     const dequantize_options& options = {});

/// `in` quantized into `out`. InvalidArgument when no tensor qualifies, or a tensor chosen by
/// name cannot be (its rows do not divide by the group size).
[[nodiscard]] result<mlx_rewrite_summary> quantize(const std::string& in, const std::string& out,
                                                   const quantize_options& options = {});
[[nodiscard]] result<mlx_rewrite_summary> quantize(checkpoint in, const std::string& in_path, const std::string& out,
                                                   const quantize_options& options = {});

}  // namespace safetensors::pipeline
