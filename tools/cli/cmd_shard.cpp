// SPDX-License-Identifier: Apache-2.0
// `safetensors shard IN... OUTDIR [--max-shard-size 5GB] [--prefix model]`: splits files
// or checkpoints into shards plus an index, streamed, atomically.
#include <fmt/format.h>

#include "command.h"
#include "option_flags.h"
#include "pipeline_run.h"
#include "report.h"

namespace st_cli {
namespace {

struct shard_args {
  std::vector<std::string> paths;  // inputs then OUTDIR
  std::string max_size = "5GB";
  std::string prefix = "model";
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
  bool quiet = false;
};

/// --max-shard-size's default, 5GB.
constexpr std::uint64_t default_shard_bytes = 5'000'000'000;

run_result run_shard(const shard_args& args, const option_flags& flags) {
  if (args.paths.size() < 2) {
    return usage_error(
        fmt::format("shard: missing the output directory after '{}' (usage: safetensors shard "
                    "INPUT... OUTDIR; see 'safetensors shard --help')",
                    args.paths.front()));
  }
  const std::string& out_dir = args.paths.back();
  safetensors::pipeline::convert_options options;
  options.to = "sharded";
  options.layout.max_shard_bytes = default_shard_bytes;  // also for a sharded input (the library keeps its size)
  if (auto s = flags.apply(options); !s) return std::move(s).err();
  auto done = run_pipeline(std::span(args.paths).first(args.paths.size() - 1), out_dir, std::move(options), "shard",
                           args.quiet, {.safetensors_only = true});
  if (!done) return std::move(done).err().with_path(out_dir);
  const std::size_t shards = done->files.size() > 1 ? done->files.size() - 1 : 1;  // the index is last
  fmt::print("wrote {} tensors ({} bytes) in {} shard{} to {}\n", done->tensors, done->bytes, shards,
             shards == 1 ? "" : "s", printable_text(out_dir));
  for (const auto& name : done->files) fmt::print("  {}\n", printable_text(name));
  return exit_ok;
}

const command_registrar shard_registrar{
    "shard", "Split files or checkpoints into shards of at most --max-shard-size, plus an index",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<shard_args>();
      auto flags = std::make_shared<option_flags>();
      app.add_option("paths", args->paths, "Input files, indexes or directories, then the output directory")
          ->required()
          ->expected(1, -1);  // run_shard names a missing OUTDIR
      flags->bind(app.add_option("--max-shard-size", args->max_size,
                                 "Largest shard: decimal (5GB = 5,000,000,000 bytes, 500MB) or binary (2GiB) units")
                      ->capture_default_str(),
                  "max_shard_size");
      flags->bind(app.add_option("--prefix", args->prefix, "File name prefix")->capture_default_str(), "prefix");
      flags->bind(add_max_output_size(app, args->max_output_size), "max_output_size");
      add_quiet(app, args->quiet);
      return [args, flags] { return run_shard(*args, *flags); };
    }};

}  // namespace
}  // namespace st_cli
