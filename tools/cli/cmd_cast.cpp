// SPDX-License-Identifier: Apache-2.0
// `safetensors cast IN OUT --dtype T [--only GLOB]... [--exclude GLOB]...`: converts the
// floating-point tensors to T (round to nearest even, T's saturation rule), streamed in
// chunks; other tensors are copied unchanged.
#include <memory>

#include "command.h"
#include "option_flags.h"
#include "pipeline_run.h"
#include "report.h"

namespace st_cli {
namespace {

struct cast_args {
  std::string in;
  std::string out;
  std::string dtype;
  std::vector<std::string> only;
  std::vector<std::string> exclude;
  bool quiet = false;
  bool saturate = false;
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
};

run_result run_cast(const cast_args& args, const option_flags& flags) {
  safetensors::pipeline::convert_options options;
  options.to = "safetensors";
  options.replace_input = true;  // cast in place: the input is replaced once the output is complete
  if (auto s = flags.apply(options); !s) return std::move(s).err();
  auto done = run_pipeline(std::span(&args.in, 1), args.out, std::move(options), "cast", args.quiet,
                           {.safetensors_only = true, .one_input_file = true, .file_output = true});
  if (!done) return std::move(done).err();
  return exit_ok;
}

const command_registrar cast_registrar{
    "cast", "Convert floating-point tensors to another float dtype (streamed, atomic)", [](CLI::App& app) -> runner {
      auto args = std::make_shared<cast_args>();
      auto flags = std::make_shared<option_flags>();
      app.add_option("in", args->in, "Input SafeTensors file")->required();
      app.add_option("out", args->out, "Output file (replaced atomically)")->required()->check(output_file);
      flags->bind(
          app.add_option("--dtype", args->dtype, "Target dtype: F64, F32, F16, BF16, F8_*, F6_*, F4")->required(),
          "dtype");
      const auto [only, exclude] =
          add_selection(app, args->only, args->exclude, "Convert only tensors matching this glob or name",
                        "Leave tensors matching this glob or name unchanged");
      flags->bind(only, "cast_only");
      flags->bind(exclude, "cast_exclude");
      flags->bind(app.add_flag("--saturate", args->saturate,
                               "F8 targets: values beyond the range become the largest finite value, not NaN/Inf"),
                  "saturate");
      flags->bind(add_max_output_size(app, args->max_output_size), "max_output_size");
      add_quiet(app, args->quiet);
      return [args, flags] { return run_cast(*args, *flags); };
    }};

}  // namespace
}  // namespace st_cli
