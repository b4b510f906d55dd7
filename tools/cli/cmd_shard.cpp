// SPDX-License-Identifier: Apache-2.0
// `safetensors shard IN... OUTDIR [--max-shard-size 5GB] [--prefix model]`: splits files
// or checkpoints into shards plus an index, streamed, atomically.
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "checkpoint_tensors.h"
#include "command.h"
#include "input.h"
#include "progress.h"
#include "report.h"
#include "safetensors/pipeline/output_check.h"

namespace st_cli {

using safetensors::pipeline::input_files;
using safetensors::pipeline::write_checkpoint_output;
namespace {

struct shard_args {
  std::vector<std::string> paths;  // inputs then OUTDIR
  std::string max_size = "5GB";
  std::string prefix = "model";
  bool quiet = false;
};

run_result run_shard(const shard_args& args) {
  if (args.paths.size() < 2) {
    return usage_error(
        fmt::format("shard: missing the output directory after '{}' (usage: safetensors shard "
                    "INPUT... OUTDIR; see 'safetensors shard --help')",
                    args.paths.front()));
  }
  auto max = safetensors::parse_byte_size(args.max_size);
  if (!max) return std::move(max).err();
  const std::string& out_dir = args.paths.back();
  std::vector<safetensors::checkpoint> inputs;
  for (std::size_t i = 0; i + 1 < args.paths.size(); ++i) {
    auto c = open_streamed(args.paths[i]);
    if (!c) return std::move(c).err();
    print_checkpoint_warnings(*c);
    inputs.push_back(std::move(c).value());
  }
  std::vector<output_tensor> tensors;
  std::vector<std::string> input_paths;
  for (const auto& c : inputs) {
    append_tensors(c, tensors);
    for (auto& f : input_files(c)) input_paths.push_back(std::move(f));
  }
  std::vector<safetensors::tensor_spec> specs;
  for (const auto& t : tensors) {
    specs.push_back({t.name, t.type, {t.source->shape.begin(), t.source->shape.end()}});
  }
  safetensors::shard_write_options options;
  options.max_shard_bytes = *max;
  options.prefix = args.prefix;
  options.file.metadata = common_metadata(inputs);
  std::uint64_t total = 0;
  for (const auto& t : tensors) total += t.source->byte_size();
  progress bar("shard", total, !args.quiet);
  std::vector<std::byte> buffer;
  auto produce = [&](std::size_t i, const safetensors::chunk_sink& sink) -> safetensors::status {
    return read_tensor_chunks(*tensors[i].file, *tensors[i].source, buffer,
                              [&](std::span<const std::byte> chunk) -> safetensors::status {
                                bar.advance(chunk.size());
                                return sink(chunk);
                              });
  };
  auto plan = write_checkpoint_output(out_dir, specs, produce, options, input_paths);
  if (!plan) return with_path(std::move(plan).err(), out_dir);
  bar.finish();
  fmt::print("wrote {} tensors ({} bytes) in {} shard{} to {}\n", tensors.size(), total, plan->shards.size(),
             plan->shards.size() == 1 ? "" : "s", out_dir);
  for (const auto& name : plan->file_names) fmt::print("  {}\n", name);
  if (plan->shards.size() > 1) fmt::print("  {}.safetensors.index.json\n", args.prefix);
  return exit_ok;
}

const command_registrar registrar{
    "shard", "Split files or checkpoints into shards of at most --max-shard-size, plus an index",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<shard_args>();
      app.add_option("paths", args->paths, "Input files, indexes or directories, then the output directory")
          ->required()
          ->expected(1, -1);  // run_shard names a missing OUTDIR
      app.add_option("--max-shard-size", args->max_size,
                     "Largest shard: decimal (5GB = 5,000,000,000 bytes, 500MB) or binary (2GiB) units")
          ->capture_default_str();
      app.add_option("--prefix", args->prefix, "File name prefix")->capture_default_str();
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      return [args] { return run_shard(*args); };
    }};

}  // namespace
}  // namespace st_cli
