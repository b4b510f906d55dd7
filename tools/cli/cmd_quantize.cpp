// SPDX-License-Identifier: Apache-2.0
// `safetensors quantize IN OUT [--bits B] [--group-size G] [--mode M] [--only GLOB]...
// [--exclude GLOB]... [--config-out PATH] [--max-shard-size 5GB]`: writes an MLX-layout
// checkpoint (P.weight as U32 codes, P.scales, P.biases) with MLX's CPU quantizer: the
// library's pipeline::quantize (safetensors/pipeline/mlx_rewrite.h). IN may be a sharded
// checkpoint; OUT is then a checkpoint directory.
#include <fmt/format.h>

#include "checkpoint_tensors.h"
#include "command.h"
#include "pipeline_run.h"
#include "progress.h"
#include "report.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/pipeline/mlx_rewrite.h"

namespace st_cli {
namespace {

namespace mlx = safetensors::mlx;
namespace sp = safetensors::pipeline;

struct quantize_args {
  std::string in;
  std::string out;
  std::optional<unsigned> bits;
  std::optional<unsigned> group_size;
  std::string mode = "affine";
  std::vector<std::string> only;
  std::vector<std::string> exclude;
  std::string config_out;
  std::string max_shard_size = "5GB";
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
  bool quiet = false;
};

run_result run_quantize(const quantize_args& args) {
  auto mode = mlx::parse_mode(args.mode);
  if (!mode) {
    return usage_error(fmt::format("unknown --mode '{}': use affine, mxfp4, mxfp8 or nvfp4", args.mode));
  }
  sp::quantize_options options;
  options.params = mlx::default_params(*mode);
  if (args.bits) options.params.bits = *args.bits;
  if (args.group_size) options.params.group_size = *args.group_size;
  if (auto s = mlx::check_quantize_params(options.params); !s) return std::move(s).err();
  auto max = safetensors::parse_byte_size(args.max_shard_size);
  if (!max) return std::move(max).err();
  options.max_shard_bytes = *max;
  options.select = {args.only, args.exclude};
  options.config_out = args.config_out;
  auto budget = max_output_bytes(args.max_output_size);
  if (!budget) return std::move(budget).err();
  options.max_output_bytes = *budget;
  auto in = open_checkpoint_input(args.in);
  if (!in) return std::move(in).err().with_path(args.in);
  pipeline_progress bar("quantize", args.quiet);
  options.progress = bar.callback();
  auto done = sp::quantize(std::move(in).value(), args.in, args.out, options);
  bar.finish();
  if (!done) return std::move(done).err();
  return exit_ok;
}

const command_registrar quantize_registrar{
    "quantize", "Quantize linear and embedding weights into an MLX checkpoint", [](CLI::App& app) -> runner {
      auto args = std::make_shared<quantize_args>();
      app.add_option("in", args->in,
                     "SafeTensors file with F32/F16/BF16 weights, or a sharded checkpoint's directory or index")
          ->required();
      app.add_option("out", args->out, "Output MLX file; for a sharded input, the output checkpoint directory")
          ->required()
          ->check(output_file);
      app.add_option("--bits", args->bits, "Bits per weight (affine: 2, 3, 4, 5, 6, 8; default per mode)");
      app.add_option("--group-size", args->group_size, "Group size (affine: 32, 64, 128; default per mode)");
      app.add_option("--mode", args->mode, "affine (default), mxfp4, mxfp8 or nvfp4");
      add_selection(app, args->only, args->exclude, "Quantize only tensors matching this glob or name",
                    "Leave tensors matching this glob or name unquantized");
      add_max_output_size(app, args->max_output_size);
      add_quiet(app, args->quiet);
      app.add_option("--config-out", args->config_out, "Write an mlx-lm style quantization config fragment here")
          ->check(output_file);
      app.add_option("--max-shard-size", args->max_shard_size,
                     "Sharded input only: largest output shard, decimal (5GB) or binary (2GiB) units")
          ->capture_default_str();
      return [args] { return run_quantize(*args); };
    }};

}  // namespace
}  // namespace st_cli
