// SPDX-License-Identifier: Apache-2.0
// What `convert` writes: every output format (SafeTensors file or sharded directory, NumPy
// .npz / .npy, GGUF) consumes any tensor_source. A sink checks what it can before it
// creates anything (dtypes the format lacks, names, tensor count), then streams the
// source's tensors into its format's atomic writer: the output appears complete or not
// at all.
#pragma once

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "tensor_source.h"

namespace st_cli {

enum class output_format { safetensors, safetensors_sharded, npz, npy, gguf };

/// "SafeTensors", "SafeTensors (sharded)", "NumPy .npz", "NumPy .npy", "GGUF".
[[nodiscard]] std::string_view output_format_name(output_format f) noexcept;

/// The options of `convert` that shape what is written.
struct sink_options {
  bool compress = false;            ///< .npz: deflate members
  std::string rename_long;          ///< GGUF: "hash" shortens names over 63 bytes
  std::vector<std::string> inputs;  ///< every file read: no output file may be one (output_path.h)
};

class tensor_sink {
 public:
  virtual ~tensor_sink() = default;
  /// Writes every tensor of `source` to the output and commits it. Errors found before
  /// writing (a dtype or name the format cannot hold) are InvalidArgument naming the tensor
  /// and what the format takes.
  [[nodiscard]] virtual safetensors::status write(const tensor_source& source) = 0;
};

using sink_ptr = std::unique_ptr<tensor_sink>;

/// The writer for `format` at `path`.
[[nodiscard]] sink_ptr make_sink(output_format format, const std::string& path, const sink_options& options);
/// The writers make_sink chooses from (sink_<format>.cpp, convert_gguf_out.cpp).
/// A sharded output writes through write_checkpoint_output: each shard file and the index
/// are checked against `inputs` first, and directories it created are removed on failure.
[[nodiscard]] sink_ptr make_safetensors_sink(const std::string& path, bool sharded, std::vector<std::string> inputs);
[[nodiscard]] sink_ptr make_npz_sink(const std::string& path, bool compress);
[[nodiscard]] sink_ptr make_npy_sink(const std::string& path);
[[nodiscard]] sink_ptr make_gguf_sink(const std::string& path, const std::string& rename_long);

/// Prints "safetensors: warning: <message>" to stderr (lossy conversions).
void print_warning(std::string_view message);

}  // namespace st_cli
