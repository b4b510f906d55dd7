// SPDX-License-Identifier: Apache-2.0
// `safetensors verify DIR|INDEX|FILE [--checksums] [--policy P]`: the index against its
// shards and every shard against the format rules; exit 0 consistent, 1 problems, 2 I/O.
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "command.h"
#include "progress.h"
#include "report.h"
#include "safetensors/checkpoint.h"

namespace st_cli {
namespace {

std::string_view problem_name(safetensors::checkpoint_problem p) {
  using safetensors::checkpoint_problem;
  switch (p) {
    case checkpoint_problem::tensor_missing_from_shard: return "tensor missing from its shard";
    case checkpoint_problem::tensor_in_several_shards: return "tensor in several shards";
    case checkpoint_problem::tensor_not_in_weight_map: return "tensor not in the weight_map";
    case checkpoint_problem::total_size_mismatch: return "total_size mismatch";
    case checkpoint_problem::shard_invalid: return "invalid shard";
  }
  return "problem";
}

struct verify_args {
  std::string path;
  std::string policy = "reference";
  bool checksums = false;
  bool quiet = false;
};

int run_verify(const verify_args& args) {
  safetensors::verify_options options;
  options.checksums = args.checksums;
  options.open.shard.backend = safetensors::io_backend::pread;  // headers only; never SIGBUS
  options.open.shard.parse.policy = *safetensors::parse_policy(args.policy);
  std::optional<progress> bar;  // one per shard being hashed
  std::string hashing;
  std::uint64_t hashed = 0;
  if (!args.quiet) {
    options.on_hashed = [&](const std::string& path, std::uint64_t done, std::uint64_t size) {
      if (path != hashing) {
        bar.reset();
        hashing = path;
        hashed = 0;
        bar.emplace(fmt::format("sha256 {}", path.substr(path.find_last_of('/') + 1)), size, true);
      }
      bar->advance(done - std::exchange(hashed, done));
    };
  }
  auto report = safetensors::verify_checkpoint(args.path, options);
  bar.reset();
  if (!report) {
    print_error(report.err());
    return exit_code_for(report.err());
  }
  if (!report->index_path.empty()) fmt::print("index: {}\n", report->index_path);
  for (const auto& s : report->shards) {
    fmt::print("  {}: {}", s.name, s.ok ? fmt::format("ok ({} tensors, {} bytes)", s.tensors, s.file_size) : "FAILED");
    if (!s.sha256.empty()) fmt::print("  sha256 {}", s.sha256);
    fmt::print("\n");
  }
  for (const auto& issue : report->issues) {
    fmt::print("{}: {}: {}\n", problem_name(issue.kind), safetensors::error_code_name(issue.error.code),
               issue.error.to_string());
  }
  if (report->ok()) {
    fmt::print("ok: {} tensors, {} bytes in {} shard{}\n", report->tensors, report->data_size,
               report->shards.size(), report->shards.size() == 1 ? "" : "s");
    return exit_ok;
  }
  fmt::print("FAILED: {} problem{}\n", report->issues.size(), report->issues.size() == 1 ? "" : "s");
  int status = exit_failed;
  for (const auto& issue : report->issues) {
    if (issue.error.code == safetensors::error_code::io) status = exit_usage;
  }
  return status;
}

const command_registrar registrar{
    "verify", "Check a checkpoint: index against shards, each shard against the format (exit 0/1/2)",
    [](CLI::App& app) -> std::function<int()> {
      auto args = std::make_shared<verify_args>();
      app.add_option("path", args->path, "Checkpoint directory, index or single file")->required();
      app.add_flag("--checksums", args->checksums, "Also print the SHA-256 of every shard");
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      app.add_option("--policy", args->policy, "reference (default), strict or lenient")
          ->check(CLI::IsMember({"reference", "strict", "lenient"}));
      return [args] { return run_verify(*args); };
    }};

}  // namespace
}  // namespace st_cli
