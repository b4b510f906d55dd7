// SPDX-License-Identifier: Apache-2.0
// `safetensors cast IN OUT --dtype T [--only GLOB]... [--exclude GLOB]...`: converts the
// floating-point tensors to T (round to nearest even, T's saturation rule), streamed in
// chunks; other tensors are copied unchanged.
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "pipeline_run.h"
#include "report.h"
#include "safetensors/pipeline/chunk_cast.h"

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
};

run_result run_cast(const cast_args& args) {
  const auto target = safetensors::parse_dtype(args.dtype);
  if (!target || !safetensors::pipeline::castable(*target)) {
    return usage_error(
        fmt::format("--dtype '{}': expected a floating-point dtype (F64, F32, F16, BF16, F8_E4M3, "
                    "F8_E5M2, F8_E4M3FNUZ, F8_E5M2FNUZ, F8_E8M0, F6_E2M3, F6_E3M2, F4)",
                    args.dtype));
  }
  safetensors::pipeline::convert_options options;
  options.to = "safetensors";
  options.cast = *target;
  options.cast_only = {args.only, args.exclude};
  options.saturate = args.saturate;
  options.replace_input = true;  // cast in place: the input is replaced once the output is complete
  auto done = run_pipeline(std::span(&args.in, 1), args.out, std::move(options), "cast", args.quiet,
                           {.safetensors_only = true, .one_input_file = true, .file_output = true});
  if (!done) return std::move(done).err();
  return exit_ok;
}

const command_registrar cast_registrar{
    "cast", "Convert floating-point tensors to another float dtype (streamed, atomic)", [](CLI::App& app) -> runner {
      auto args = std::make_shared<cast_args>();
      app.add_option("in", args->in, "Input SafeTensors file")->required();
      app.add_option("out", args->out, "Output file (replaced atomically)")->required();
      app.add_option("--dtype", args->dtype, "Target dtype: F64, F32, F16, BF16, F8_*, F6_*, F4")->required();
      app.add_option("--only", args->only, "Convert only tensors matching this glob or name (repeatable)")
          ->allow_extra_args(false);
      app.add_option("--exclude", args->exclude, "Leave tensors matching this glob or name unchanged (repeatable)")
          ->allow_extra_args(false);
      app.add_flag("--saturate", args->saturate,
                   "F8 targets: values beyond the range become the largest finite value, not NaN/Inf");
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      return [args] { return run_cast(*args); };
    }};

}  // namespace
}  // namespace st_cli
