// SPDX-License-Identifier: Apache-2.0
// `safetensors convert IN OUT [options]`: any input format (SafeTensors, PyTorch .pt/.bin,
// NumPy .npy/.npz, GGUF; sniffed from its bytes) to any output format the project writes
// (SafeTensors, .npz, .npy for one tensor, GGUF; chosen by OUT's extension or --to). The
// conversion is the library's pipeline (safetensors/pipeline/convert.h); this file maps
// the options onto it and prints what happened.
#include <memory>
#include <optional>

#include <fmt/format.h>

#include "command.h"
#include "convert_read_options.h"
#include "count_text.h"
#include "foreign_formats.h"
#include "option_flags.h"
#include "pipeline_run.h"
#include "progress.h"
#include "report.h"
#include "safetensors/pipeline/convert.h"

namespace st_cli {
namespace {

namespace st = safetensors;
namespace sp = safetensors::pipeline;

/// "converted 3 tensors (1,234 params, 4.8 KiB) from PyTorch to SafeTensors: out.safetensors"
void print_summary(const sp::convert_summary& s, const std::string& out_path) {
  fmt::print(stderr, "converted {} ({} params, {}) from {} to {}: {}\n", count_of(s.tensors, "tensor"),
             with_commas(s.parameters), human_bytes(s.bytes), s.input_format, s.output->name, printable_text(out_path));
  // Notes name what was skipped: tensor names, pickle globals, zip members.
  for (const auto& note : s.notes) fmt::print(stderr, "  {}\n", printable_text(note));
}

run_result run_convert(const convert_args& args, const option_flags& flags) {
  sp::convert_options options;
  if (auto s = flags.apply(options); !s) return std::move(s).err();
  auto summary = run_pipeline(std::span(&args.in, 1), args.out, std::move(options), "convert", args.quiet);
  if (!summary) return std::move(summary).err();
  if (!args.quiet) print_summary(*summary, args.out);
  return exit_ok;
}

/// --dtype keep casts nothing.
std::optional<std::string> cast_unless_keep(const std::string& typed) {
  if (typed == "keep") return std::nullopt;
  return typed;
}

const command_registrar convert_registrar{
    "convert", "Convert between SafeTensors, PyTorch (.pt/.bin, read only), NumPy (.npy/.npz) and GGUF",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<convert_args>();
      auto flags = std::make_shared<option_flags>();
      app.add_option("input", args->in,
                     "Input file (format sniffed from its bytes), or a sharded checkpoint: its directory or index file")
          ->required();
      app.add_option("output", args->out,
                     "Output file; its extension (.safetensors, .npz, .npy, .gguf) or --to picks the format (a "
                     "sharded input is joined into it). A directory path (existing, or ending in '/'): sharded "
                     "SafeTensors")
          ->required()
          ->check(output_file);
      flags->bind(
          app.add_option("--to", args->to, "Output format, whatever the output's name: safetensors, npz, npy or gguf")
              ->check(CLI::IsMember({"safetensors", "npz", "npy", "gguf"})),
          "to");
      flags->bind(
          app.add_option("--key", args->key, "PyTorch input: take the tensors from this nested dict (e.g. state_dict)"),
          "key");
      flags->bind(
          app.add_option("--shared", args->shared, "PyTorch input: tensors sharing storage: keep (copy each) or dedup")
              ->check(CLI::IsMember({"keep", "dedup"})),
          "shared");
      flags->bind(app.add_option("--dtype", args->dtype,
                                 "Cast floating tensors to F32, F16 or BF16 (integers keep their type); keep: as read "
                                 "(quantized GGUF becomes F32)")
                      ->check(CLI::IsMember({"F32", "F16", "BF16", "keep"})),
                  "dtype", cast_unless_keep);
      flags->bind(app.add_option("--rename-long", args->rename_long, "GGUF output: 'hash' shortens names over 63 bytes")
                      ->check(CLI::IsMember({"hash"})),
                  "hash_long_names", [](const std::string&) { return std::optional<std::string>("true"); });
      flags->bind(app.add_flag("--compress", args->compress, ".npz output: deflate the members (default: stored)"),
                  "compress");
      flags->bind(app.add_flag("--strict", args->strict,
                               "PyTorch input: refuse objects outside the allowlist and unconvertible tensors instead "
                               "of skipping them"),
                  "strict");
      flags->bind(app.add_option("--max-expanded-size", args->max_expanded_size,
                                 ".npz input: most that deflated members may expand to in total (zip-bomb limit)")
                      ->capture_default_str(),
                  "max_expanded_size");
      flags->bind(
          app.add_option("--max-ratio", args->max_ratio,
                         ".npz input: highest compression ratio of a deflated member over 1 MiB (zip-bomb limit)")
              ->check(CLI::PositiveNumber)
              ->capture_default_str(),
          "max_ratio");
      flags->bind(add_max_output_size(app, args->max_output_size), "max_output_size");
      add_quiet(app, args->quiet, "No progress bar and no summary line");
      return [args, flags] {
        // Running out of memory anywhere in the pipeline is a LimitExceeded error, not an internal error.
        return without_bad_alloc(args->in, [&] { return run_convert(*args, *flags); });
      };
    }};

}  // namespace

}  // namespace st_cli
