// SPDX-License-Identifier: Apache-2.0
// `safetensors extract IN OUT [--only GLOB]... [--exclude GLOB]... [--rename FROM=TO]...
// [--set-meta K=V]... [--del-meta K]...`: a new file with a subset of the tensors,
// renamed, with edited metadata; streamed, atomic.
#include <memory>

#include "command.h"
#include "option_flags.h"
#include "pipeline_run.h"
#include "report.h"

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
  std::string max_output_size;  ///< --max-output-size; empty: the default budget
};

run_result run_extract(const extract_args& args, const option_flags& flags) {
  safetensors::pipeline::convert_options options;
  options.to = "safetensors";
  options.replace_input = true;  // extract in place: the input is replaced once the output is complete
  if (auto s = flags.apply(options); !s) return std::move(s).err();
  auto done = run_pipeline(std::span(&args.in, 1), args.out, std::move(options), "extract", args.quiet,
                           {.safetensors_only = true, .one_input_file = true, .file_output = true});
  if (!done) return std::move(done).err();
  return exit_ok;
}

const command_registrar extract_registrar{
    "extract", "Write a new file with a subset of tensors, renamed, with edited metadata (streamed, atomic)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<extract_args>();
      auto flags = std::make_shared<option_flags>();
      app.add_option("in", args->in, "Input SafeTensors file")->required();
      app.add_option("out", args->out, "Output file (replaced atomically)")->required()->check(output_file);
      const auto [only, exclude] =
          add_selection(app, args->only, args->exclude, "Keep tensors matching this glob or name",
                        "Drop tensors matching this glob or name");
      flags->bind(only, "only");
      flags->bind(exclude, "exclude");
      flags->bind(
          app.add_option("--rename", args->rename, "FROM=TO renames a tensor; 'a.*=b.*' replaces a prefix (repeatable)")
              ->allow_extra_args(false),
          "rename");
      flags->bind(app.add_option("--set-meta", args->set_meta, "KEY=VALUE sets a metadata entry (repeatable)")
                      ->allow_extra_args(false),
                  "set_metadata");
      flags->bind(
          app.add_option("--del-meta", args->del_meta, "Removes a metadata key (repeatable)")->allow_extra_args(false),
          "remove_metadata");
      flags->bind(add_max_output_size(app, args->max_output_size), "max_output_size");
      flags->bind(
          app.add_option("--align", args->align, "Data alignment of the output: a power of two >= 8 (default 8)"),
          "alignment");
      add_quiet(app, args->quiet);
      return [args, flags] { return run_extract(*args, *flags); };
    }};

}  // namespace
}  // namespace st_cli
