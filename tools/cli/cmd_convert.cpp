// SPDX-License-Identifier: Apache-2.0
// `safetensors convert IN OUT [options]`: any input format (SafeTensors, PyTorch .pt/.bin,
// NumPy .npy/.npz, GGUF; sniffed from its bytes) to any output format the project writes
// (SafeTensors, .npz, .npy for one tensor, GGUF; chosen by OUT's extension or --to). The
// conversion is the library's pipeline (safetensors/pipeline/convert.h); this file maps
// the options onto it and prints what happened.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "convert_read_options.h"
#include "count_text.h"
#include "foreign_formats.h"
#include "pipeline_run.h"
#include "progress.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/pipeline/convert_input.h"
#include "safetensors/sniff.h"

namespace st_cli {
namespace {

namespace st = safetensors;
namespace sp = safetensors::pipeline;

/// The input's format for the option checks ("PyTorch (sharded)" for a PyTorch checkpoint directory or index).
struct input_kind {
  std::string name;
  bool pytorch = false;
  bool npz = false;
};

st::result<input_kind> input_format(const std::string& in) {
  if (is_url(in)) return input_kind{"SafeTensors", false, false};
  auto resolved = sp::resolve_convert_input(in);
  if (!resolved) return std::move(resolved).err();
  if (resolved->shape == sp::convert_input::kind::pytorch_sharded) return input_kind{"PyTorch (sharded)", true, false};
  if (resolved->shape == sp::convert_input::kind::safetensors_sharded) return input_kind{"SafeTensors (sharded)"};
  auto format = st::sniff_file(resolved->path);
  if (!format) return std::move(format).err().with_path(resolved->path);
  return input_kind{std::string(st::file_format_name(*format)),
                    *format == st::file_format::pytorch_zip || *format == st::file_format::pickle,
                    *format == st::file_format::npz};
}

/// An option that only some input formats take.
struct input_option {
  bool given;
  std::string_view name;        ///< as typed: "--key"
  bool input_kind::*applies;    ///< &input_kind::pytorch
  std::string_view input_name;  ///< "PyTorch"
};

/// Options that do not apply to this input and output are refused, never ignored, naming the
/// option as typed (the library refuses them too, but cannot tell a default from a choice).
/// The input is sniffed only when one of the input-specific options was given.
st::status check_options(const convert_args& args) {
  const input_option input_options[] = {
      {args.key_given, "--key", &input_kind::pytorch, "PyTorch"},
      {args.shared_given, "--shared", &input_kind::pytorch, "PyTorch"},
      {args.strict, "--strict", &input_kind::pytorch, "PyTorch"},
      {args.max_expanded_size_given, "--max-expanded-size", &input_kind::npz, ".npz"},
      {args.max_ratio_given, "--max-ratio", &input_kind::npz, ".npz"},
  };
  if (std::ranges::any_of(input_options, &input_option::given)) {
    auto in = input_format(args.in);
    if (!in) return std::move(in).err().with_path(args.in);
    for (const auto& option : input_options) {
      if (option.given && !((*in).*option.applies)) {
        return usage_error(
            fmt::format("{} applies to {} input only (the input is {})", option.name, option.input_name, in->name));
      }
    }
  }
  if (args.compress || !args.rename_long.empty()) {
    auto out = sp::output_format_for(args.out, args.to);
    if (!out) return std::move(out).err();
    if (args.compress && !(*out)->takes.compress) {
      return usage_error(fmt::format("--compress applies to .npz output only (the output is {})", (*out)->name));
    }
    if (!args.rename_long.empty() && !(*out)->takes.hash_long_names) {
      return usage_error(fmt::format("--rename-long applies to GGUF output only (the output is {})", (*out)->name));
    }
  }
  return {};
}

/// "converted 3 tensors (1,234 params, 4.8 KiB) from PyTorch to SafeTensors: out.safetensors"
void print_summary(const sp::convert_summary& s, const std::string& out_path) {
  fmt::print(stderr, "converted {} ({} params, {}) from {} to {}: {}\n", count_of(s.tensors, "tensor"),
             with_commas(s.parameters), human_bytes(s.bytes), s.input_format, s.output->name, printable_text(out_path));
  // Notes name what was skipped: tensor names, pickle globals, zip members.
  for (const auto& note : s.notes) fmt::print(stderr, "  {}\n", printable_text(note));
}

run_result run_convert(const convert_args& args) {
  if (auto s = check_options(args); !s) return std::move(s).err();
  auto npz_limits = npz_limits_of(args);
  if (!npz_limits) return std::move(npz_limits).err().with_path(args.in);

  sp::convert_options options;
  options.to = args.to;
  if (args.dtype != "keep") options.cast = st::parse_dtype(args.dtype);
  options.read.key = args.key;
  options.read.shared = args.shared == "dedup" ? sp::shared_tensors::dedup : sp::shared_tensors::keep;
  options.read.strict = args.strict;
  options.read.npz = *npz_limits;
  options.compress = args.compress;
  options.hash_long_names = args.rename_long == "hash";
  auto budget = max_output_bytes(args.max_output_size);
  if (!budget) return std::move(budget).err();
  options.max_output_bytes = *budget;
  auto summary = run_pipeline(std::span(&args.in, 1), args.out, std::move(options), "convert", args.quiet);
  if (!summary) return std::move(summary).err();
  if (!args.quiet) print_summary(*summary, args.out);
  return exit_ok;
}

const command_registrar convert_registrar{
    "convert", "Convert between SafeTensors, PyTorch (.pt/.bin, read only), NumPy (.npy/.npz) and GGUF",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<convert_args>();
      app.add_option("input", args->in,
                     "Input file (format sniffed from its bytes), or a sharded checkpoint: its directory or index file")
          ->required();
      app.add_option("output", args->out,
                     "Output file; its extension (.safetensors, .npz, .npy, .gguf) or --to picks the format (a "
                     "sharded input is joined into it). A directory path (existing, or ending in '/'): sharded "
                     "SafeTensors")
          ->required();
      app.add_option("--to", args->to, "Output format, whatever the output's name: safetensors, npz, npy or gguf")
          ->check(CLI::IsMember({"safetensors", "npz", "npy", "gguf"}));
      auto* key =
          app.add_option("--key", args->key, "PyTorch input: take the tensors from this nested dict (e.g. state_dict)");
      auto* shared =
          app.add_option("--shared", args->shared, "PyTorch input: tensors sharing storage: keep (copy each) or dedup")
              ->check(CLI::IsMember({"keep", "dedup"}));
      app.add_option("--dtype", args->dtype,
                     "Cast floating tensors to F32, F16 or BF16 (integers keep their type); keep: as read "
                     "(quantized GGUF becomes F32)")
          ->check(CLI::IsMember({"F32", "F16", "BF16", "keep"}));
      app.add_option("--rename-long", args->rename_long, "GGUF output: 'hash' shortens names over 63 bytes")
          ->check(CLI::IsMember({"hash"}));
      app.add_flag("--compress", args->compress, ".npz output: deflate the members (default: stored)");
      app.add_flag("--strict", args->strict,
                   "PyTorch input: refuse objects outside the allowlist and unconvertible tensors instead of "
                   "skipping them");
      auto* max_expanded =
          app.add_option("--max-expanded-size", args->max_expanded_size,
                         ".npz input: most that deflated members may expand to in total (zip-bomb limit)")
              ->capture_default_str();
      auto* max_ratio =
          app.add_option("--max-ratio", args->max_ratio,
                         ".npz input: highest compression ratio of a deflated member over 1 MiB (zip-bomb limit)")
              ->check(CLI::PositiveNumber)
              ->capture_default_str();
      add_max_output_size(app, args->max_output_size);
      add_quiet(app, args->quiet, "No progress bar and no summary line");
      return [args, key, shared, max_expanded, max_ratio] {
        args->key_given = key->count() > 0;
        args->shared_given = shared->count() > 0;
        args->max_expanded_size_given = max_expanded->count() > 0;
        args->max_ratio_given = max_ratio->count() > 0;
        // Running out of memory anywhere in the pipeline is a LimitExceeded error, not an internal error.
        return without_bad_alloc(args->in, [&] { return run_convert(*args); });
      };
    }};

}  // namespace

}  // namespace st_cli
