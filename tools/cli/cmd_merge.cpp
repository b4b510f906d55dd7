// SPDX-License-Identifier: Apache-2.0
// `safetensors merge DIR|INDEX OUT`: joins a sharded checkpoint into one file, streamed, atomically.
#include <fmt/format.h>

#include "checkpoint_input.h"
#include "checkpoint_tensors.h"
#include "command.h"
#include "report.h"
#include "rewrite.h"
#include "safetensors/pipeline/output_check.h"

namespace st_cli {

using safetensors::pipeline::input_files;
namespace {

struct merge_args {
  std::string input;
  std::string output;
  bool quiet = false;
};

run_result run_merge(const merge_args& args) {
  auto c = open_streamed(args.input);
  if (!c) return std::move(c).err();
  print_checkpoint_warnings(*c);
  std::vector<output_tensor> tensors;
  append_tensors(*c, tensors);
  safetensors::write_options options;
  options.metadata = common_metadata(std::span(&c.value(), 1));
  if (auto s = write_rewritten(args.output, input_files(*c), in_place::refuse, tensors, options, !args.quiet, "merge");
      !s)
    return std::move(s).err();
  fmt::print("wrote {} tensors ({} bytes) from {} shard{} to {}\n", tensors.size(), c->data_size(), c->shards().size(),
             c->shards().size() == 1 ? "" : "s", args.output);
  return exit_ok;
}

const command_registrar registrar{"merge", "Join a sharded checkpoint (directory or index) into one file",
                                  [](CLI::App& app) -> runner {
                                    auto args = std::make_shared<merge_args>();
                                    app.add_option("input", args->input, "Checkpoint directory or index")->required();
                                    app.add_option("output", args->output, "Output .safetensors file")->required();
                                    app.add_flag("-q,--quiet", args->quiet, "No progress bar");
                                    return [args] { return run_merge(*args); };
                                  }};

}  // namespace
}  // namespace st_cli
