// SPDX-License-Identifier: Apache-2.0
// `safetensors extract IN OUT [--only GLOB]... [--exclude GLOB]... [--rename FROM=TO]...
// [--set-meta K=V]... [--del-meta K]...`: a new file with a subset of the tensors,
// renamed, with edited metadata; streamed, atomic.
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "pipeline_run.h"
#include "report.h"

namespace st_cli {
namespace {

struct extract_args {
  std::string in;
  std::string out;
  std::vector<std::string> only;
  std::vector<std::string> exclude;
  std::vector<std::string> rename;
  std::vector<std::string> set_meta;
  std::vector<std::string> del_meta;
  std::uint64_t align = 8;
  bool quiet = false;
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
};

/// Splits "K=V" at the first '='; false without one (or with an empty K).
bool split_pair(const std::string& text, std::string& key, std::string& value) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  key = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

run_result run_extract(const extract_args& args) {
  namespace sp = safetensors::pipeline;
  sp::convert_options options;
  for (const auto& text : args.rename) {
    std::string from;
    std::string to;
    if (!split_pair(text, from, to)) return usage_error(fmt::format("--rename '{}': expected FROM=TO", text));
    auto rule = sp::rename_rule::make(from, to);
    if (!rule) return usage_error(fmt::format("--rename '{}': {}", text, rule.err().message));
    options.rename.push_back(std::move(rule).value());
  }
  for (const auto& text : args.set_meta) {
    std::string k;
    std::string v;
    if (!split_pair(text, k, v)) return usage_error(fmt::format("--set-meta '{}': expected KEY=VALUE", text));
    options.metadata.set[k] = v;
  }
  options.metadata.remove = args.del_meta;
  options.to = "safetensors";
  options.select = {args.only, args.exclude};
  options.layout.alignment = args.align;
  auto budget = max_output_bytes(args.max_output_size);
  if (!budget) return std::move(budget).err();
  options.max_output_bytes = *budget;
  options.replace_input = true;  // extract in place: the input is replaced once the output is complete
  auto done = run_pipeline(std::span(&args.in, 1), args.out, std::move(options), "extract", args.quiet,
                           {.safetensors_only = true, .one_input_file = true, .file_output = true});
  if (!done) return std::move(done).err();
  return exit_ok;
}

const command_registrar extract_registrar{
    "extract", "Write a new file with a subset of tensors, renamed, with edited metadata (streamed, atomic)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<extract_args>();
      app.add_option("in", args->in, "Input SafeTensors file")->required();
      app.add_option("out", args->out, "Output file (replaced atomically)")->required();
      add_selection(app, args->only, args->exclude, "Keep tensors matching this glob or name",
                    "Drop tensors matching this glob or name");
      app.add_option("--rename", args->rename, "FROM=TO renames a tensor; 'a.*=b.*' replaces a prefix (repeatable)")
          ->allow_extra_args(false);
      app.add_option("--set-meta", args->set_meta, "KEY=VALUE sets a metadata entry (repeatable)")
          ->allow_extra_args(false);
      app.add_option("--del-meta", args->del_meta, "Removes a metadata key (repeatable)")->allow_extra_args(false);
      add_max_output_size(app, args->max_output_size);
      app.add_option("--align", args->align, "Data alignment of the output: a power of two >= 8 (default 8)");
      add_quiet(app, args->quiet);
      return [args] { return run_extract(*args); };
    }};

}  // namespace
}  // namespace st_cli
