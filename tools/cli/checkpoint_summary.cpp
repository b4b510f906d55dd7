// SPDX-License-Identifier: Apache-2.0
// `inspect` and `validate` of a checkpoint directory or index.

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "checkpoint_tensors.h"
#include "count_text.h"
#include "input_diagnosis.h"
#include "json_util.h"
#include "mlx_summary.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/json_text.h"
#include "safetensors/sniff.h"
#include "tensor_table.h"

namespace st_cli {

bool is_checkpoint_path(const std::string& path) {
  auto at = resolve_input(path);  // one that cannot be resolved says why when it is opened
  return at && at->names_checkpoint();
}

run_result inspect_checkpoint(const std::string& path, bool json) {
  auto c = open_checkpoint_input(path);  // headers are all inspect needs
  if (!c) return std::move(c).err();
  if (json) {
    std::vector<std::string> metadata;
    for (const auto& [k, v] : c->index_metadata()) {
      // total_size is a number in the index and stays one; other values are kept as text.
      const bool number = k == "total_size" && c->total_size();
      metadata.push_back(fmt::format("{}:{}", safetensors::json_quote(k), number ? v : safetensors::json_quote(v)));
    }
    std::vector<std::string> shards;
    for (const auto& s : c->shards()) {
      shards.push_back(fmt::format(R"({{"name":{},"header":{}}})", safetensors::json_quote(s.name),
                                   safetensors::header_to_display_json(s.file.header())));
    }
    fmt::print(R"({{"index":{},"metadata":{{{}}},"shards":[{}]}})"
               "\n",
               c->sharded() ? safetensors::json_quote(c->index_path()) : "null", fmt::join(metadata, ","),
               fmt::join(shards, ","));
    return exit_ok;
  }
  param_overrides overrides;
  for (const auto& s : c->shards()) overrides.merge(logical_param_overrides(s.file.path(), s.file.header()));
  std::uint64_t params = 0;
  for (const auto& t : c->tensors()) params += param_count(overrides, *t.info);
  fmt::print("checkpoint:  {}\n", printable_text(c->directory()));
  fmt::print("index:       {}\n", c->sharded() ? printable_text(c->index_path()) : "none (single file)");
  fmt::print("shards:      {}\n", with_commas(c->shards().size()));
  fmt::print("tensors:     {}\n", with_commas(c->tensors().size()));
  fmt::print("parameters:  {}\n", with_commas(params));
  fmt::print("data:        {}", count_of(c->data_size(), "byte"));
  if (c->total_size()) fmt::print(" (index total_size {})", with_commas(*c->total_size()));
  fmt::print("\n");
  for (const auto& [k, v] : c->index_metadata()) fmt::print("  {}: {}\n", printable_text(k), printable_text(v));
  fmt::print("\n{:<40}  {:>8}  {:>18}  {}\n", "shard", "tensors", "bytes", "__metadata__");
  for (const auto& s : c->shards()) {
    std::vector<std::string> meta;
    if (s.file.header().metadata()) {
      for (const auto& [k, v] : *s.file.header().metadata())
        meta.push_back(fmt::format("{}={}", printable_text(k), printable_text(v)));
    }
    fmt::print("{:<40}  {:>8}  {:>18}  {}\n", printable_text(s.name), with_commas(s.file.tensors().size()),
               with_commas(s.file.file_size()), fmt::join(meta, " "));
  }
  std::vector<table_row> rows;
  for (const auto& t : c->tensors()) {
    rows.push_back({{std::string(t.name), std::string(safetensors::dtype_name(t.info->type)),
                     std::vector<std::uint64_t>(t.info->shape.begin(), t.info->shape.end()), t.info->byte_size(),
                     param_count(overrides, *t.info)},
                    c->shards()[t.shard].name});
  }
  print_tensor_table(rows, "shard");
  return exit_ok;
}

int validate_checkpoint(const std::string& path, safetensors::validation_policy policy, bool json) {
  safetensors::verify_options options;
  options.open.shard.backend = safetensors::io_backend::pread;
  options.open.shard.parse.policy = policy;
  auto report = verify_checkpoint_at(path, options);
  const safetensors::error* first = nullptr;
  if (!report) {
    first = &report.err();
  } else if (!report->issues.empty()) {
    first = &report->issues.front().error;
  }
  if (json) {
    // Every problem the text output lists, under "problems"; the first also as code/message.
    std::vector<std::string> problems;
    if (!report) problems.push_back(problem_json(*first, path));
    if (report) {
      for (const auto& issue : report->issues) problems.push_back(problem_json(issue.error, path));
    }
    if (first == nullptr) {
      fmt::print(R"({{"file":{},"ok":true,"code":null,"message":null,"offset":null,"tensor":null,"warnings":[],)"
                 R"("problems":[]}})"
                 "\n",
                 safetensors::json_quote(path));
    } else {
      const safetensors::error shown = safetensors::explain_format_error(*first);
      fmt::print(R"({{"file":{},"ok":false,"code":"{}","message":{},"offset":{},"tensor":{},"warnings":[],)"
                 R"("problems":[{}]}})"
                 "\n",
                 safetensors::json_quote(path), safetensors::error_code_name(shown.code),
                 safetensors::json_quote(shown.to_string()), shown.offset ? std::to_string(*shown.offset) : "null",
                 shown.tensor ? safetensors::json_quote(*shown.tensor) : "null", fmt::join(problems, ","));
    }
  } else if (!report) {
    fmt::print("{}\n", problem_line(*first, path));
  } else if (report->ok()) {
    fmt::print("{}: ok ({} in {})\n", printable_text(path), count_of(report->tensors, "tensor"),
               count_of(report->shards.size(), "shard"));
  } else {
    for (const auto& issue : report->issues) fmt::print("{}\n", problem_line(issue.error, path));
  }
  if (first == nullptr) return exit_ok;
  if (!report) return exit_code_for(*first);
  int status = exit_failed;
  for (const auto& issue : report->issues) {
    if (issue.error.code == safetensors::error_code::io) status = exit_usage;
  }
  return status;
}

}  // namespace st_cli
