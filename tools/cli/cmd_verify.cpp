// SPDX-License-Identifier: Apache-2.0
// `safetensors verify DIR|INDEX|FILE [--checksums] [--policy P]`: the index against its
// shards and every shard against the format rules; exit 0 consistent, 1 problems, 2 I/O.
#include <optional>
#include <utility>

#include <fmt/format.h>

#include "command.h"
#include "count_text.h"
#include "input_diagnosis.h"
#include "progress.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/json_text.h"
#include "safetensors/sha256.h"
#include "safetensors/sniff.h"

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
  bool json = false;
  bool quiet = false;
};

/// {"kind":"...", "file", "code", "message", "offset", "tensor"}
std::string issue_json(std::string_view kind, const safetensors::error& e, const std::string& path) {
  const std::string fields = problem_json(e, path);
  return fmt::format(R"({{"kind":{},{})", safetensors::json_quote(kind), std::string_view(fields).substr(1));
}

int exit_status_of(const safetensors::verify_report& report) {
  if (report.ok()) return exit_ok;
  for (const auto& issue : report.issues) {
    if (issue.error.code == safetensors::error_code::io) return exit_usage;
  }
  return exit_failed;
}

/// One JSON object: the verdict, every shard and every problem.
int print_json(const verify_args& args, const safetensors::result<safetensors::verify_report>& report) {
  if (!report) {
    fmt::print(R"({{"path":{},"index":null,"ok":false,"tensors":0,"bytes":0,"shards":[],"problems":[{}]}})"
               "\n",
               safetensors::json_quote(args.path), issue_json("unusable checkpoint", report.err(), args.path));
    return exit_code_for(report.err());
  }
  std::vector<std::string> shards;
  for (const auto& s : report->shards) {
    shards.push_back(fmt::format(R"({{"name":{},"path":{},"ok":{},"tensors":{},"bytes":{},"sha256":{}}})",
                                 safetensors::json_quote(s.name), safetensors::json_quote(s.path), s.ok, s.tensors,
                                 s.file_size, s.digest.empty() ? "null" : safetensors::json_quote(s.digest)));
  }
  std::vector<std::string> problems;
  for (const auto& issue : report->issues) {
    problems.push_back(issue_json(problem_name(issue.kind), issue.error, args.path));
  }
  fmt::print(R"({{"path":{},"index":{},"ok":{},"tensors":{},"bytes":{},"shards":[{}],"problems":[{}]}})"
             "\n",
             safetensors::json_quote(args.path),
             report->index_path.empty() ? "null" : safetensors::json_quote(report->index_path), report->ok(),
             report->tensors, report->data_size, fmt::join(shards, ","), fmt::join(problems, ","));
  return exit_status_of(*report);
}

run_result run_verify(const verify_args& args) {
  safetensors::verify_options options;
  if (args.checksums) options.digest = safetensors::make_sha256_hasher;
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
  auto report = verify_checkpoint_at(args.path, options);
  bar.reset();
  if (args.json) return print_json(args, report);
  if (!report) return std::move(report).err();
  if (!report->index_path.empty()) fmt::print("index: {}\n", printable_text(report->index_path));
  for (const auto& s : report->shards) {
    fmt::print(
        "  {}: {}", printable_text(s.name),
        s.ok ? fmt::format("ok ({}, {})", count_of(s.tensors, "tensor"), count_of(s.file_size, "byte")) : "FAILED");
    if (!s.digest.empty()) fmt::print("  sha256 {}", s.digest);
    fmt::print("\n");
  }
  for (const auto& issue : report->issues) {
    fmt::print("{}: {}: {}\n", problem_name(issue.kind), safetensors::error_code_name(issue.error.code),
               printable_text(safetensors::explain_format_error(issue.error).to_string()));
  }
  if (report->ok()) {
    fmt::print("ok: {}, {} in {}\n", count_of(report->tensors, "tensor"), count_of(report->data_size, "byte"),
               count_of(report->shards.size(), "shard"));
    return exit_ok;
  }
  fmt::print("FAILED: {}\n", count_of(report->issues.size(), "problem"));
  return exit_status_of(*report);
}

const command_registrar verify_registrar{
    "verify", "Check a checkpoint: index against shards, each shard against the format (exit 0/1/2)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<verify_args>();
      app.add_option("path", args->path, "Checkpoint directory, index or single file")->required();
      app.add_flag("--checksums", args->checksums, "Also print the SHA-256 of every shard");
      add_quiet(app, args->quiet);
      add_policy(app, args->policy, "reference (default), strict or lenient");
      add_json(app, args->json, "Print one JSON object: verdict, shards, problems");
      return [args] { return run_verify(*args); };
    }};

}  // namespace
}  // namespace st_cli
