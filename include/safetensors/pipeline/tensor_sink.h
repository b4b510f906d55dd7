// SPDX-License-Identifier: Apache-2.0
// Where a pipeline writes: every output format (SafeTensors file or sharded directory, NumPy
// .npz / .npy, GGUF) consumes any tensor_source. A sink checks what it can before it
// creates anything (dtypes the format lacks, names, tensor count), then streams the
// source's tensors into its format's atomic writer: the output appears complete or not
// at all.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

struct format_row;  // format_table.h: one row per format

/// The format written at `path`: the row `to` names ("safetensors", "sharded", "npz", "npy",
/// "gguf": a row's id, or one of its extensions without the dot), else the one whose
/// extension ends the name. A directory path (an existing directory, or one ending in '/') is
/// a sharded SafeTensors checkpoint, as is any path with "sharded". InvalidArgument, naming
/// `path`, when the name says nothing we write (a PyTorch extension: those are read, not
/// written). The row is never null and always has a make_sink.
[[nodiscard]] result<const format_row*> output_format_for(const std::string& path, std::string_view to = {});

/// How a SafeTensors output is laid out.
struct safetensors_layout {
  std::uint64_t alignment = 8;        ///< of each tensor's data: a power of two >= 8
  std::uint64_t max_shard_bytes = 0;  ///< sharded: largest shard; 0: a sharded input's, else 5 GB
  std::string prefix = "model";       ///< sharded: file names "<prefix>-00001-of-00003.safetensors"
};

/// What shapes writing. Fields that do not apply to the chosen format are ignored here:
/// the pipelines refuse them (convert.h).
struct sink_options {
  bool compress = false;            ///< .npz: deflate members
  bool hash_long_names = false;     ///< GGUF: shorten names over 63 bytes with a hash suffix
  safetensors_layout layout;        ///< SafeTensors outputs
  std::vector<std::string> inputs;  ///< every file read: no output file may be one (output_check.h)
  warning_handler on_warning;       ///< told of losses (metadata NumPy cannot hold, BF16 as '<V2')
};

class tensor_sink {
 public:
  virtual ~tensor_sink() = default;
  /// Writes every tensor of `source` to the output and commits it. Errors found before
  /// writing (a dtype or name the format cannot hold) are InvalidArgument naming the tensor
  /// and what the format takes.
  [[nodiscard]] virtual status write(const tensor_source& source) = 0;
  /// After a successful write: the files written (a sharded output's shards, then its index).
  [[nodiscard]] const std::vector<std::string>& files() const noexcept { return files_; }

 protected:
  std::vector<std::string> files_;
};

using sink_ptr = std::unique_ptr<tensor_sink>;

/// The writers of the format table's rows (format_table.h; sink_<format>.cpp). A sharded
/// output writes through write_checkpoint_output: each shard file and the index are checked against `inputs`
/// first, and directories it created are removed on failure.
[[nodiscard]] sink_ptr make_safetensors_sink(const std::string& path, bool sharded, const safetensors_layout& layout,
                                             std::vector<std::string> inputs);
[[nodiscard]] sink_ptr make_npz_sink(const std::string& path, bool compress, warning_handler on_warning);
[[nodiscard]] sink_ptr make_npy_sink(const std::string& path, warning_handler on_warning);
[[nodiscard]] sink_ptr make_gguf_sink(const std::string& path, bool hash_long_names);

}  // namespace safetensors::pipeline
