// SPDX-License-Identifier: Apache-2.0
// `safetensors convert IN OUT [options]`: any input format (SafeTensors, PyTorch .pt/.bin,
// NumPy .npy/.npz, GGUF; sniffed from its bytes) to any output format the project writes
// (SafeTensors, .npz, .npy for one tensor, GGUF; chosen by OUT's extension or --to). One
// pipeline: the input's tensor_source, an optional --dtype cast, the output's tensor_sink.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "convert_paths.h"
#include "convert_read_options.h"
#include "count_text.h"
#include "foreign_formats.h"
#include "output_path.h"
#include "progress.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/sniff.h"
#include "tensor_sink.h"
#include "tensor_source.h"

namespace st_cli {
namespace {

namespace st = safetensors;

constexpr std::string_view output_choices = "safetensors, npz, npy or gguf";

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

/// The output format: --to, else OUT's extension. A directory path (an existing directory,
/// or a path ending in '/') is a sharded SafeTensors checkpoint; any other name is one file,
/// a sharded input joined into it.
st::result<output_format> choose_output(const convert_args& args) {
  const std::string ext = extension_of(args.out);
  const bool directory = is_directory_path(args.out);
  const std::string to = args.to.empty() ? (ext.empty() || directory ? std::string() : ext.substr(1)) : args.to;
  if (to == "safetensors" || (to.empty() && directory)) {
    return directory ? output_format::safetensors_sharded : output_format::safetensors;
  }
  if (directory) {
    return with_path(usage_error(fmt::format("a directory output is a sharded SafeTensors checkpoint, not {}: name "
                                             "a file for --to {}",
                                             to, to)),
                     args.out);
  }
  if (to == "npz") return output_format::npz;
  if (to == "npy") return output_format::npy;
  if (to == "gguf") return output_format::gguf;
  if (to == "pt" || to == "pth" || to == "bin" || to == "ckpt") {
    return with_path(usage_error(fmt::format("PyTorch files are read, not written: write {} (end the name in "
                                             ".safetensors, .npz, .npy or .gguf, or give --to)",
                                             output_choices)),
                     args.out);
  }
  return with_path(usage_error(fmt::format("cannot tell the output format from the name: end it in .safetensors, "
                                           ".npz, .npy or .gguf, or give --to {}",
                                           output_choices)),
                   args.out);
}

/// The input's format as `sniff` tells it ("PyTorch (sharded)" for a checkpoint directory or index).
struct input_kind {
  std::string name;
  bool pytorch = false;
  bool npz = false;
};

st::result<input_kind> input_format(const convert_input& input) {
  if (input.shape == convert_input::kind::pytorch_sharded) return input_kind{"PyTorch (sharded)", true, false};
  if (is_url(input.path)) return input_kind{"SafeTensors", false, false};
  auto format = st::sniff_file(input.path);
  if (!format) return with_path(std::move(format).err(), input.path);
  return input_kind{std::string(st::file_format_name(*format)),
                    *format == st::file_format::pytorch_zip || *format == st::file_format::pickle,
                    *format == st::file_format::npz};
}

/// Options that do not apply to this input and output are refused, never ignored.
st::status check_options(const convert_args& args, output_format out, const input_kind& in) {
  const auto pytorch_only = [&](bool given, std::string_view option) -> st::status {
    if (!given || in.pytorch) return {};
    return usage_error(fmt::format("{} applies to PyTorch input only (the input is {})", option, in.name));
  };
  const auto npz_only = [&](bool given, std::string_view option) -> st::status {
    if (!given || in.npz) return {};
    return usage_error(fmt::format("{} applies to .npz input only (the input is {})", option, in.name));
  };
  for (auto s : {pytorch_only(args.key_given, "--key"), pytorch_only(args.shared_given, "--shared"),
                 pytorch_only(args.strict, "--strict"), npz_only(args.max_expanded_size_given, "--max-expanded-size"),
                 npz_only(args.max_ratio_given, "--max-ratio")}) {
    if (!s) return s;
  }
  if (args.compress && out != output_format::npz) {
    return usage_error(
        fmt::format("--compress applies to .npz output only (the output is {})", output_format_name(out)));
  }
  if (!args.rename_long.empty() && out != output_format::gguf) {
    return usage_error(
        fmt::format("--rename-long applies to GGUF output only (the output is {})", output_format_name(out)));
  }
  return {};
}

/// "converted 3 tensors (1,234 params, 4.8 KiB) from PyTorch to SafeTensors: out.safetensors"
void print_summary(const tensor_source& source, output_format out, const std::string& out_path) {
  std::uint64_t params = 0;
  for (const auto& t : source.tensors()) params += t.element_count();
  fmt::print(stderr, "converted {} ({} params, {}) from {} to {}: {}\n", count_of(source.tensors().size(), "tensor"),
             with_commas(params), human_bytes(total_bytes(source)), source.format(), output_format_name(out), out_path);
  for (const auto& note : source.notes()) fmt::print(stderr, "  {}\n", note);
}

/// A URL is one remote SafeTensors file (remote reading knows no other format).
st::result<convert_input> resolve_input(const std::string& in) {
  if (is_url(in)) return convert_input{convert_input::kind::file, in, {}};
  return resolve_convert_input(in);
}

run_result run_convert(convert_args args) {
  auto input = resolve_input(args.in);
  if (!input) return std::move(input).err();
  args.in = input->path;
  args.input_files = input->files;
  if (input->shape == convert_input::kind::safetensors_sharded) {
    return with_path(usage_error(fmt::format("a sharded SafeTensors checkpoint is converted one file at a time: "
                                             "join it first ('safetensors merge {} ONE.safetensors'), or "
                                             "reshard it with 'safetensors shard'",
                                             args.in)),
                     args.in);
  }
  auto in_format = input_format(*input);
  if (!in_format) return std::move(in_format).err();
  // First, before any byte is written: the output is a file or absent, not an input, in a writable directory
  // (a sharded output's files are checked by its sink once their names are known).
  if (auto s = check_convert_output(args.out, *input); !s) return std::move(s).err();
  auto out_format = choose_output(args);
  if (!out_format) return std::move(out_format).err();
  if (auto s = check_options(args, *out_format, *in_format); !s) return std::move(s).err();

  auto npz_limits = npz_limits_of(args);
  if (!npz_limits) return with_path(std::move(npz_limits).err(), args.in);
  const source_options read_options{.key = args.key, .shared = args.shared, .strict = args.strict, .npz = *npz_limits};
  auto source = input->shape == convert_input::kind::pytorch_sharded ? open_pytorch_source(args.in, read_options)
                                                                     : open_tensor_source(args.in, read_options);
  if (!source) return std::move(source).err();
  source_ptr pipeline = std::move(source).value();
  if (args.dtype != "keep") pipeline = cast_source(std::move(pipeline), *st::parse_dtype(args.dtype));

  progress bar("convert", total_bytes(*pipeline), !args.quiet);
  pipeline = progress_source(std::move(pipeline), bar);
  auto sink = make_sink(*out_format, args.out,
                        {.compress = args.compress, .rename_long = args.rename_long, .inputs = args.input_files});
  if (auto s = sink->write(*pipeline); !s) return with_path(std::move(s).err(), args.out);
  bar.finish();
  if (!args.quiet) print_summary(*pipeline, *out_format, args.out);
  return exit_ok;
}

const command_registrar registrar{
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
      app.add_flag("-q,--quiet", args->quiet, "No progress bar and no summary line");
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

std::string_view output_format_name(output_format f) noexcept {
  switch (f) {
    case output_format::safetensors: return "SafeTensors";
    case output_format::safetensors_sharded: return "SafeTensors (sharded)";
    case output_format::npz: return "NumPy .npz";
    case output_format::npy: return "NumPy .npy";
    case output_format::gguf: return "GGUF";
  }
  return "?";
}

sink_ptr make_sink(output_format format, const std::string& path, const sink_options& options) {
  switch (format) {
    case output_format::safetensors: return make_safetensors_sink(path, false, options.inputs);
    case output_format::safetensors_sharded: return make_safetensors_sink(path, true, options.inputs);
    case output_format::npz: return make_npz_sink(path, options.compress);
    case output_format::npy: return make_npy_sink(path);
    case output_format::gguf: return make_gguf_sink(path, options.rename_long);
  }
  return nullptr;
}

void print_warning(std::string_view message) { fmt::print(stderr, "safetensors: warning: {}\n", message); }

}  // namespace st_cli
