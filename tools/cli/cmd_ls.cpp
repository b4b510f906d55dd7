// SPDX-License-Identifier: Apache-2.0
// `safetensors ls FILE [--json]`: tensor names in file order, one per line (for scripts).
#include <memory>

#include <fmt/format.h>

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

int run_ls(const ls_args& args) {
  auto f = open_input(args.file);
  if (!f) {
    print_error(f.err());
    return exit_code_for(f.err());
  }
  if (args.json) {
    std::vector<std::string_view> names;
    for (const auto& t : f->tensors()) names.push_back(t.name);
    fmt::print("{}\n", json_string_array(names));
  } else {
    for (const auto& t : f->tensors()) fmt::print("{}\n", t.name);
  }
  return exit_ok;
}

const command_registrar registrar{"ls", "List tensor names, one per line, in file order",
                                  [](CLI::App& app) -> std::function<int()> {
                                    auto args = std::make_shared<ls_args>();
                                    app.add_option("file", args->file, "SafeTensors file")->required();
                                    app.add_flag("--json", args->json, "Print a JSON array of names");
                                    return [args] { return run_ls(*args); };
                                  }};

}  // namespace
}  // namespace st_cli
