// SPDX-License-Identifier: Apache-2.0
// `safetensors ls FILE|DIR|INDEX [--json]`: tensor names in file order, one per line (for
// scripts). A checkpoint lists its shards in order, each in file order.
#include <memory>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "checkpoint_tensors.h"
#include "command.h"
#include "input.h"
#include "json_util.h"
#include "report.h"

namespace st_cli {
namespace {

struct ls_args {
  std::string file;
  bool json = false;
};

void print_names(const std::vector<std::string_view>& names, bool json) {
  if (json) {
    fmt::print("{}\n", json_string_array(names));
  } else {
    for (std::string_view name : names) fmt::print("{}\n", printable_text(name));
  }
}

run_result run_ls(const ls_args& args) {
  std::vector<std::string_view> names;
  if (is_checkpoint_path(args.file)) {
    auto c = open_checkpoint_input(args.file);  // names need headers only
    if (!c) return std::move(c).err();
    for (const auto& shard : c->shards()) {
      for (const auto& t : shard.file.tensors()) names.push_back(t.name);
    }
    print_names(names, args.json);
    return exit_ok;
  }
  auto f = open_input(args.file);
  if (!f) return std::move(f).err();
  for (const auto& t : f->tensors()) names.push_back(t.name);
  print_names(names, args.json);
  return exit_ok;
}

const command_registrar ls_registrar{
    "ls", "List tensor names, one per line, in file order", [](CLI::App& app) -> runner {
      auto args = std::make_shared<ls_args>();
      app.add_option("file", args->file, "SafeTensors file, checkpoint directory or index")->required();
      add_json(app, args->json, "Print a JSON array of names");
      return [args] { return run_ls(*args); };
    }};

}  // namespace
}  // namespace st_cli
