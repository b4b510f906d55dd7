// SPDX-License-Identifier: Apache-2.0
// Helpers shared by `dequantize` and `quantize`: their input (one file or a sharded
// checkpoint, read with pread so memory stays bounded) and chunked tensor copies.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "safetensors/checkpoint.h"
#include "safetensors/file.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/writer.h"

namespace st_cli {

/// Bytes of input or output a command holds in memory per chunk.
inline constexpr std::size_t mlx_chunk_bytes = 8U << 20;

/// The input of an MLX command: a `.safetensors` file, or a checkpoint directory / index.
class mlx_input {
 public:
  [[nodiscard]] static safetensors::result<mlx_input> open(const std::string& path);

  /// True for a directory or an index (even of one shard): the output is then a directory.
  [[nodiscard]] bool directory_output() const noexcept { return directory_output_; }
  /// Every tensor of the input (for a sharded one: byte offsets are meaningless) and the
  /// `__metadata__` its shards share.
  [[nodiscard]] const safetensors::header& meta() const noexcept {
    return combined_ ? *combined_ : checkpoint_.shards()[0].file.meta();
  }
  [[nodiscard]] const safetensors::checkpoint& checkpoint() const noexcept { return checkpoint_; }
  /// A path in the checkpoint's directory, for finding config.json beside it.
  [[nodiscard]] const std::string& anchor() const noexcept { return anchor_; }
  /// Reads `destination.size()` bytes of tensor `name` from byte `offset` of its data.
  /// Errors: TensorNotFound, IoError (naming the shard and tensor).
  [[nodiscard]] safetensors::status read(std::string_view name, std::uint64_t offset,
                                         std::span<std::byte> destination) const;
  /// Passes tensor `name`'s bytes to `sink` unchanged, a few MiB at a time.
  [[nodiscard]] safetensors::status copy(std::string_view name, const safetensors::chunk_sink& sink) const;

 private:
  safetensors::checkpoint checkpoint_;
  std::optional<safetensors::header> combined_;
  std::string anchor_;
  bool directory_output_ = false;
};

/// Writes `specs` into the directory `out` (created if missing) as a sharded checkpoint
/// with `write_checkpoint`, keeping the input index's extra metadata; prints nothing.
[[nodiscard]] safetensors::status write_sharded(const std::string& out, const mlx_input& in,
                                                std::span<const safetensors::tensor_spec> specs,
                                                const safetensors::tensor_producer& produce,
                                                std::uint64_t max_shard_bytes,
                                                const std::optional<safetensors::metadata_map>& metadata);

/// A sink appending to tensor `name` of `out`.
[[nodiscard]] safetensors::chunk_sink append_to(safetensors::stream_writer& out, std::string name);

/// Prints each warning as "safetensors: warning: <file>: <text>".
void print_warnings(const std::string& file, const std::vector<std::string>& warnings);

/// What `dequantize` and `quantize` both start from: the input, its MLX description (with
/// config.json beside it) and the shard size for directory output.
struct mlx_job {
  mlx_input in;
  safetensors::mlx::checkpoint_info info;
  std::uint64_t max_shard_bytes = safetensors::default_max_shard_bytes;
};

/// Opens `in_path` and describes it. `show_warnings` prints the description's warnings.
[[nodiscard]] safetensors::result<mlx_job> open_mlx_job(const std::string& in_path, const std::string& max_shard_size,
                                                        bool show_warnings);

}  // namespace st_cli
