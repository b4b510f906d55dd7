// SPDX-License-Identifier: Apache-2.0
// `safetensors convert IN OUT [options]`: between SafeTensors and PyTorch (.pt/.bin, read
// only), NumPy (.npy/.npz) and GGUF. The input's format comes from its bytes, the output's
// from its extension; the converters live in convert_<format>.cpp.
#include <filesystem>
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "foreign_formats.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/sniff.h"

namespace st_cli {
namespace {

bool has_extension(const std::string& path, std::string_view ext) {
  return path.size() >= ext.size() && path.compare(path.size() - ext.size(), ext.size(), ext) == 0;
}

enum class target_kind { safetensors, numpy, gguf, unknown };

target_kind target_of(const std::string& out) {
  if (has_extension(out, ".npz") || has_extension(out, ".npy")) return target_kind::numpy;
  if (has_extension(out, ".gguf")) return target_kind::gguf;
  if (has_extension(out, ".safetensors") || std::filesystem::is_directory(out) || out.back() == '/') {
    return target_kind::safetensors;
  }
  return target_kind::unknown;
}

run_result run_convert(const convert_args& args) {
  std::error_code ec;
  if (std::filesystem::is_directory(args.in, ec)) {
    // A sharded PyTorch checkpoint: pytorch_model.bin.index.json beside its shards.
    return convert_pytorch_to_safetensors(args);
  }
  // A URL is read as SafeTensors (remote reading knows no other format).
  auto format = is_url(args.in) ? safetensors::result<safetensors::file_format>(safetensors::file_format::safetensors)
                                : safetensors::sniff_file(args.in);
  if (!format) return std::move(format).err();
  using safetensors::error_code;
  using safetensors::file_format;
  using safetensors::make_error;
  const target_kind target = target_of(args.out);
  switch (*format) {
    case file_format::pytorch_zip:
    case file_format::pickle: return convert_pytorch_to_safetensors(args);
    case file_format::npy:
    case file_format::npz: return convert_numpy_to_safetensors(args);
    case file_format::gguf: return convert_gguf_to_safetensors(args);
    case file_format::safetensors:
      if (target == target_kind::numpy) return convert_safetensors_to_numpy(args);
      if (target == target_kind::gguf) return convert_safetensors_to_gguf(args);
      return with_path(usage_error("cannot tell the output format from its name: end it in .npz, .npy or .gguf"),
                       args.out);
    case file_format::unknown:
      return with_path(
          make_error(error_code::invalid_format, "not a SafeTensors, PyTorch, NumPy (.npy/.npz) or GGUF file"),
          args.in);
    default:
      return with_path(make_error(error_code::unsupported,
                                  fmt::format("cannot convert a {} file (supported: SafeTensors, PyTorch, NumPy "
                                              ".npy/.npz, GGUF)",
                                              safetensors::file_format_name(*format))),
                       args.in);
  }
}

const command_registrar registrar{
    "convert", "Convert between SafeTensors and PyTorch (.pt/.bin), NumPy (.npy/.npz) or GGUF",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<convert_args>();
      app.add_option("input", args->in, "Input file (format sniffed from its bytes) or sharded PyTorch directory")
          ->required();
      app.add_option("output", args->out, "Output file; its extension picks the format for SafeTensors input")
          ->required();
      app.add_option("--key", args->key, "PyTorch: take the tensors from this nested dict (e.g. state_dict)");
      app.add_option("--shared", args->shared, "PyTorch: tensors sharing storage: keep (copy each) or dedup")
          ->check(CLI::IsMember({"keep", "dedup"}));
      app.add_option("--dtype", args->dtype, "GGUF input: output dtype F32, F16, BF16 or keep")
          ->check(CLI::IsMember({"F32", "F16", "BF16", "keep"}));
      app.add_option("--rename-long", args->rename_long, "GGUF output: 'hash' shortens names over 63 bytes")
          ->check(CLI::IsMember({"hash"}));
      app.add_flag("--compress", args->compress, ".npz output: deflate the members (default: stored)");
      app.add_flag("-q,--quiet", args->quiet, "No progress bar");
      return [args] { return run_convert(*args); };
    }};

}  // namespace
}  // namespace st_cli
