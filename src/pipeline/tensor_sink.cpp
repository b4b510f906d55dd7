// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/tensor_sink.h"

#include <cctype>
#include <filesystem>

#include <fmt/format.h>

#include "safetensors/pipeline/output_check.h"
#include "usage_error.h"

namespace safetensors::pipeline {

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

namespace {

constexpr std::string_view output_choices = "safetensors, npz, npy or gguf";

std::string extension_of(const std::string& path) {
  std::string ext = std::filesystem::path(path).extension().string();
  for (char& c : ext) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return ext;
}

error usage(std::string message, const std::string& path) { return detail::usage(std::move(message)).with_path(path); }

}  // namespace

result<output_format> output_format_for(const std::string& path, std::string_view to_format) {
  const std::string ext = extension_of(path);
  const bool directory = is_directory_path(path);
  const std::string to =
      to_format.empty() ? (ext.empty() || directory ? std::string() : ext.substr(1)) : std::string(to_format);
  if (to == "sharded") return output_format::safetensors_sharded;
  if (to == "safetensors" || (to.empty() && directory)) {
    return directory ? output_format::safetensors_sharded : output_format::safetensors;
  }
  if (directory) {
    return usage(
        fmt::format("a directory output is a sharded SafeTensors checkpoint, not {}: name a file for {}", to, to),
        path);
  }
  if (to == "npz") return output_format::npz;
  if (to == "npy") return output_format::npy;
  if (to == "gguf") return output_format::gguf;
  if (to == "pt" || to == "pth" || to == "bin" || to == "ckpt") {
    return usage(fmt::format("PyTorch files are read, not written: write {} (end the name in .safetensors, .npz, "
                             ".npy or .gguf, or give the format)",
                             output_choices),
                 path);
  }
  if (!to_format.empty()) return usage(fmt::format("unknown output format '{}': {}", to, output_choices), path);
  return usage(fmt::format("cannot tell the output format from the name: end it in .safetensors, .npz, .npy or "
                           ".gguf, or give the format ({})",
                           output_choices),
               path);
}

sink_ptr make_sink(output_format format, const std::string& path, const sink_options& options) {
  switch (format) {
    case output_format::safetensors: return make_safetensors_sink(path, false, options.layout, options.inputs);
    case output_format::safetensors_sharded: return make_safetensors_sink(path, true, options.layout, options.inputs);
    case output_format::npz: return make_npz_sink(path, options.compress, options.on_warning);
    case output_format::npy: return make_npy_sink(path, options.on_warning);
    case output_format::gguf: return make_gguf_sink(path, options.hash_long_names);
  }
  return nullptr;
}

}  // namespace safetensors::pipeline
