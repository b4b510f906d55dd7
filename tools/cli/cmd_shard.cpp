// SPDX-License-Identifier: Apache-2.0
// `safetensors shard IN... OUTDIR [--max-shard-size 5GB] [--prefix model]`: splits files
// or checkpoints into shards plus an index, atomically.
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "checkpoint_tensors.h"
#include "command.h"
#include "report.h"

namespace st_cli {
namespace {

struct shard_args {
  std::vector<std::string> paths;  // inputs then OUTDIR
  std::string max_size = "5GB";
  std::string prefix = "model";
};

int run_shard(const shard_args& args) {
  if (args.paths.size() < 2) {
    print_error(fmt::format("shard: missing the output directory after '{}' (usage: safetensors shard INPUT... "
                            "OUTDIR; see 'safetensors shard --help')",
                            args.paths.front()));
    return exit_usage;
  }
  auto max = safetensors::parse_byte_size(args.max_size);
  if (!max) {
    print_error(max.err());
    return exit_usage;
  }
  const std::string& out_dir = args.paths.back();
  std::vector<safetensors::checkpoint> inputs;
  for (std::size_t i = 0; i + 1 < args.paths.size(); ++i) {
    auto c = safetensors::checkpoint::open(args.paths[i]);
    if (!c) {
      print_error(c.err());
      return exit_code_for(c.err());
    }
    print_checkpoint_warnings(*c);
    inputs.push_back(std::move(c).value());
  }
  std::vector<safetensors::tensor_data> tensors;
  for (const auto& c : inputs) append_tensors(c, tensors);
  safetensors::shard_write_options options;
  options.max_shard_bytes = *max;
  options.prefix = args.prefix;
  options.file.metadata = common_metadata(inputs);
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) {
    print_error(fmt::format("{}: cannot create the output directory: {}", out_dir, ec.message()));
    return exit_usage;
  }
  auto plan = safetensors::write_checkpoint(out_dir, tensors, options);
  if (!plan) {
    print_error(plan.err());
    return exit_code_for(plan.err());
  }
  std::uint64_t bytes = 0;
  for (const auto& t : tensors) bytes += t.data.size();
  fmt::print("wrote {} tensors ({} bytes) in {} shard{} to {}\n", tensors.size(), bytes, plan->shards.size(),
             plan->shards.size() == 1 ? "" : "s", out_dir);
  for (const auto& name : plan->file_names) fmt::print("  {}\n", name);
  if (plan->shards.size() > 1) fmt::print("  {}.safetensors.index.json\n", args.prefix);
  return exit_ok;
}

const command_registrar registrar{
    "shard", "Split files or checkpoints into shards of at most --max-shard-size, plus an index",
    [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<shard_args>();
      app.add_option("paths", args->paths, "Input files, indexes or directories, then the output directory")
          ->required()
          ->expected(1, -1);  // run_shard names a missing OUTDIR
      app.add_option("--max-shard-size", args->max_size,
                     "Largest shard: decimal (5GB = 5,000,000,000 bytes, 500MB) or binary (2GiB) units")
          ->capture_default_str();
      app.add_option("--prefix", args->prefix, "File name prefix")->capture_default_str();
      return [args] { return run_shard(*args); };
    }};

}  // namespace
}  // namespace st_cli
