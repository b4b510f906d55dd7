// SPDX-License-Identifier: Apache-2.0
// `safetensors merge DIR|INDEX OUT`: joins a sharded checkpoint into one file, streamed,
// atomically: the library's convert pipeline with a single-file output.
#include <fmt/format.h>

#include "command.h"
#include "option_flags.h"
#include "pipeline_run.h"
#include "report.h"

namespace st_cli {
namespace {

struct merge_args {
  std::string input;
  std::string output;
  bool quiet = false;
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
};

run_result run_merge(const merge_args& args, const option_flags& flags) {
  safetensors::pipeline::convert_options options;
  options.to = "safetensors";  // one file, whatever its name
  if (auto s = flags.apply(options); !s) return std::move(s).err();
  auto done = run_pipeline(std::span(&args.input, 1), args.output, std::move(options), "merge", args.quiet,
                           {.safetensors_only = true, .file_output = true});
  if (!done) return std::move(done).err();
  fmt::print("wrote {} tensors ({} bytes) from {} to {}\n", done->tensors, done->bytes, printable_text(args.input),
             printable_text(args.output));
  return exit_ok;
}

const command_registrar merge_registrar{
    "merge", "Join a sharded checkpoint (directory or index) into one file", [](CLI::App& app) -> runner {
      auto args = std::make_shared<merge_args>();
      auto flags = std::make_shared<option_flags>();
      app.add_option("input", args->input, "Checkpoint directory or index")->required();
      app.add_option("output", args->output, "Output .safetensors file")->required()->check(output_file);
      flags->bind(add_max_output_size(app, args->max_output_size), "max_output_size");
      add_quiet(app, args->quiet);
      return [args, flags] { return run_merge(*args, *flags); };
    }};

}  // namespace
}  // namespace st_cli
