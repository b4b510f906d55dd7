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
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
};

run_result run_cast(const cast_args& args) {
  const auto target = safetensors::parse_dtype(args.dtype);
  if (!target || !safetensors::pipeline::castable(*target)) {
    std::vector<std::string_view> floating;  // the library's list, widest first
    const auto all = safetensors::all_dtypes();
    for (auto t = all.rbegin(); t != all.rend(); ++t) {
      if (safetensors::pipeline::castable(*t)) floating.push_back(safetensors::dtype_name(*t));
    }
    return usage_error(
        fmt::format("--dtype '{}': expected a floating-point dtype ({})", args.dtype, fmt::join(floating, ", ")));
  }
  safetensors::pipeline::convert_options options;
  options.to = "safetensors";
  options.cast = *target;
  options.cast_only = {args.only, args.exclude};
  options.saturate = args.saturate;
  options.replace_input = true;  // cast in place: the input is replaced once the output is complete
  auto budget = max_output_bytes(args.max_output_size);
  if (!budget) return std::move(budget).err();
  options.max_output_bytes = *budget;
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
      add_selection(app, args->only, args->exclude, "Convert only tensors matching this glob or name",
                    "Leave tensors matching this glob or name unchanged");
      app.add_flag("--saturate", args->saturate,
                   "F8 targets: values beyond the range become the largest finite value, not NaN/Inf");
      add_max_output_size(app, args->max_output_size);
      add_quiet(app, args->quiet);
      return [args] { return run_cast(*args); };
    }};

}  // namespace
}  // namespace st_cli
