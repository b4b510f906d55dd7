// SPDX-License-Identifier: Apache-2.0
// `safetensors meta FILE [KEY] [--json]`: the `__metadata__` map, or one value.
#include <memory>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "checkpoint_tensors.h"
#include "command.h"
#include "report.h"
#include "safetensors/json_text.h"

namespace st_cli {
namespace {

struct meta_args {
  std::string file;
  std::string key;
  bool has_key = false;
  bool json = false;
};

run_result run_meta(const meta_args& args) {
  auto c = open_checkpoint_input(args.file);
  if (!c) return std::move(c).err();
  // A checkpoint's shards normally share one __metadata__; keys they disagree on are dropped (with a warning).
  const std::optional<safetensors::metadata_map> metadata = common_metadata(*c);
  if (args.has_key) {
    const auto it = metadata ? metadata->find(args.key) : safetensors::metadata_map::const_iterator{};
    if (!metadata || it == metadata->end()) {
      // The answer to the question asked, like grep's "no match": a finding with exit 1, not
      // a failure returned to main (no error code means "key absent": TensorNotFound exits 2).
      print_error(fmt::format("{}: metadata key '{}' not found", args.file, args.key));
      return exit_failed;
    }
    fmt::print("{}\n", args.json ? safetensors::json_quote(it->second) : printable_text(it->second));
    return exit_ok;
  }
  if (args.json) {
    std::string out = "{";
    if (metadata) {
      for (const auto& [k, v] : *metadata) {
        if (out.size() > 1) out += ',';
        out += safetensors::json_quote(k) + ":" + safetensors::json_quote(v);
      }
    }
    fmt::print("{}}}\n", out);
  } else if (metadata) {
    for (const auto& [k, v] : *metadata) fmt::print("{}: {}\n", printable_text(k), printable_text(v));
  }
  return exit_ok;
}

const command_registrar meta_registrar{
    "meta", "Print the metadata (__metadata__), or the value of one KEY (exit 1 if absent)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<meta_args>();
      app.add_option("file", args->file, "SafeTensors file, checkpoint directory or index")->required();
      app.add_option("key", args->key, "Print only this key's value")->each([args](const std::string&) {
        args->has_key = true;
      });
      add_json(app, args->json, "Print a JSON object (with KEY: a JSON string)");
      return [args] { return run_meta(*args); };
    }};

}  // namespace
}  // namespace st_cli
