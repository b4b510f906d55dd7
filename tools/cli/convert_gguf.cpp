// SPDX-License-Identifier: Apache-2.0
// Placeholder until the gguf converter lands: says so instead of failing obscurely.
#include <fmt/format.h>

#include "command.h"
#include "foreign_formats.h"
#include "report.h"

namespace st_cli {

namespace {
int not_yet(const std::string& path) {
  print_error(fmt::format("{}: gguf files are not supported yet", path));
  return exit_usage;
}
}  // namespace

int convert_gguf_to_safetensors(const convert_args& args) { return not_yet(args.in); }
int convert_safetensors_to_gguf(const convert_args& args) { return not_yet(args.in); }
int inspect_gguf(const std::string& path, bool /*json*/) { return not_yet(path); }

}  // namespace st_cli
