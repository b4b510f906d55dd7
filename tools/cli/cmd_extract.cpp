// SPDX-License-Identifier: Apache-2.0
// `safetensors extract IN OUT [--only GLOB]... [--exclude GLOB]... [--rename FROM=TO]...
// [--set-meta K=V]... [--del-meta K]...`: a new file with a subset of the tensors,
// renamed, with edited metadata; streamed, atomic.
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "input.h"
#include "progress.h"
#include "report.h"
#include "rewrite.h"
#include "select.h"

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
};

struct rename_rule {
  std::string from;
  std::string to;
  bool prefix = false;  // "a.*=b.*": replace the prefix
  bool used = false;
};

/// Splits "K=V" at the first '='; false without one (or with an empty K).
bool split_pair(const std::string& text, std::string& key, std::string& value) {
  const auto eq = text.find('=');
  if (eq == std::string::npos || eq == 0) return false;
  key = text.substr(0, eq);
  value = text.substr(eq + 1);
  return true;
}

std::string renamed(std::string_view name, std::vector<rename_rule>& rules) {
  for (auto& r : rules) {
    if (!r.prefix && name == r.from) {
      r.used = true;
      return r.to;
    }
    if (r.prefix && name.substr(0, r.from.size()) == r.from) {
      r.used = true;
      return r.to + std::string(name.substr(r.from.size()));
    }
  }
  return std::string(name);
}

run_result run_extract(const extract_args& args) {
  std::vector<rename_rule> rules;
  for (const auto& text : args.rename) {
    rename_rule r;
    if (!split_pair(text, r.from, r.to)) return usage_error(fmt::format("--rename '{}': expected FROM=TO", text));
    const bool from_star = r.from.back() == '*';
    const bool to_star = !r.to.empty() && r.to.back() == '*';
    if (from_star != to_star) {
      return usage_error(fmt::format("--rename '{}': a prefix rename needs '*' at the end of both sides", text));
    }
    if (from_star) {
      r.prefix = true;
      r.from.pop_back();
      r.to.pop_back();
    }
    rules.push_back(std::move(r));
  }

  auto f = open_input(args.in);
  if (!f) return std::move(f).err();
  auto chosen = select_tensors(*f, args.only, args.exclude);
  if (!chosen) return std::move(chosen).err();

  safetensors::write_options options;
  options.alignment = args.align;
  options.metadata = f->meta().metadata();
  for (const auto& text : args.set_meta) {
    std::string k;
    std::string v;
    if (!split_pair(text, k, v)) return usage_error(fmt::format("--set-meta '{}': expected KEY=VALUE", text));
    if (!options.metadata) options.metadata.emplace();
    (*options.metadata)[k] = v;
  }
  for (const auto& k : args.del_meta) {
    if (!options.metadata || options.metadata->erase(k) == 0) {
      return usage_error(fmt::format("{}: --del-meta: metadata key '{}' not found", args.in, k));
    }
  }

  std::vector<output_tensor> outputs;
  for (const auto* t : *chosen) outputs.push_back({&*f, t, renamed(t->name, rules), t->type});
  for (const auto& r : rules) {
    if (!r.used)
      return usage_error(
          fmt::format("{}: --rename: no selected tensor matches '{}'", args.in, r.from + (r.prefix ? "*" : "")));
  }
  if (auto s =
          write_rewritten(args.out, std::span(&args.in, 1), in_place::allow, outputs, options, !args.quiet, "extract");
      !s)
    return std::move(s).err();
  return exit_ok;
}

const command_registrar registrar{
    "extract", "Write a new file with a subset of tensors, renamed, with edited metadata (streamed, atomic)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<extract_args>();
      app.add_option("in", args->in, "Input SafeTensors file")->required();
      app.add_option("out", args->out, "Output file (replaced atomically)")->required();
      app.add_option("--only", args->only, "Keep tensors matching this glob or name (repeatable)")
          ->allow_extra_args(false);
      app.add_option("--exclude", args->exclude, "Drop tensors matching this glob or name (repeatable)")
          ->allow_extra_args(false);
      app.add_option("--rename", args->rename, "FROM=TO renames a tensor; 'a.*=b.*' replaces a prefix (repeatable)")
          ->allow_extra_args(false);
      app.add_option("--set-meta", args->set_meta, "KEY=VALUE sets a metadata entry (repeatable)")
          ->allow_extra_args(false);
      app.add_option("--del-meta", args->del_meta, "Removes a metadata key (repeatable)")->allow_extra_args(false);
      app.add_option("--align", args->align, "Data alignment of the output: a power of two >= 8 (default 8)");
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      return [args] { return run_extract(*args); };
    }};

}  // namespace
}  // namespace st_cli
