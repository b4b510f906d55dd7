// SPDX-License-Identifier: Apache-2.0
// `safetensors dequantize IN OUT [--dtype F32|F16|BF16] [--max-shard-size 5GB]`: every
// quantized MLX layer becomes a plain `P.weight` (scales and biases dropped), everything
// else is copied: the library's pipeline::dequantize (safetensors/pipeline/mlx_rewrite.h).
// IN may be a sharded checkpoint (directory or index); OUT is then a checkpoint directory.
#include <fmt/format.h>

#include "checkpoint_tensors.h"
#include "command.h"
#include "pipeline_run.h"
#include "progress.h"
#include "report.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/pipeline/mlx_rewrite.h"

namespace st_cli {
namespace {

namespace sp = safetensors::pipeline;
using safetensors::dtype;

struct dequantize_args {
  std::string in;
  std::string out;
  std::string dtype_name;
  std::string max_shard_size = "5GB";
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
  bool quiet = false;
};

run_result run_dequantize(const dequantize_args& args) {
  sp::dequantize_options options;
  if (!args.dtype_name.empty()) {
    options.to = safetensors::parse_dtype(args.dtype_name);
    if (!options.to || (*options.to != dtype::F32 && *options.to != dtype::F16 && *options.to != dtype::BF16)) {
      return usage_error(fmt::format("--dtype must be F32, F16 or BF16, not '{}'", args.dtype_name));
    }
  }
  auto max = safetensors::parse_byte_size(args.max_shard_size);
  if (!max) return std::move(max).err();
  options.max_shard_bytes = *max;
  auto budget = max_output_bytes(args.max_output_size);
  if (!budget) return std::move(budget).err();
  options.max_output_bytes = *budget;
  options.on_warning = print_warning;
  auto in = open_checkpoint_input(args.in);
  if (!in) return std::move(in).err().with_path(args.in);
  pipeline_progress bar("dequantize", args.quiet);
  options.progress = bar.callback();
  auto done = sp::dequantize(std::move(in).value(), args.in, args.out, options);
  bar.finish();
  if (!done) return std::move(done).err();
  if (done->layers == 0) print_warning(fmt::format("{}: no quantized layers, the output is a plain copy", args.in));
  return exit_ok;
}

const command_registrar dequantize_registrar{
    "dequantize", "Turn an MLX quantized checkpoint into plain F32/F16/BF16 weights", [](CLI::App& app) -> runner {
      auto args = std::make_shared<dequantize_args>();
      app.add_option("in", args->in,
                     "MLX SafeTensors file, or a sharded checkpoint's directory or index (config.json beside it is "
                     "read when present)")
          ->required();
      app.add_option("out", args->out, "Output file; for a sharded input, the output checkpoint directory")
          ->required()
          ->check(output_file);
      app.add_option("--dtype", args->dtype_name,
                     "Output dtype of dequantized weights: F32, F16 or BF16 (default: MLX's, the scales' dtype "
                     "for affine layers and BF16 for fp modes)");
      app.add_option("--max-shard-size", args->max_shard_size,
                     "Sharded input only: largest output shard, decimal (5GB) or binary (2GiB) units")
          ->capture_default_str();
      add_max_output_size(app, args->max_output_size);
      add_quiet(app, args->quiet);
      return [args] { return run_dequantize(*args); };
    }};

}  // namespace
}  // namespace st_cli
