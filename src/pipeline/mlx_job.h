// SPDX-License-Identifier: Apache-2.0
// What the MLX rewrites (mlx_rewrite.h) share: their input, one file or a sharded checkpoint
// read by pread in chunks, described as one header so layers split across shards are found;
// the sharded output; and progress counting that can cancel.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/mlx_checkpoint.h"
#include "safetensors/pipeline/tensor_source.h"
#include "safetensors/writer.h"

namespace safetensors::pipeline::detail {

/// Bytes of input or output held in memory per chunk.
inline constexpr std::size_t mlx_chunk_bytes = 8U << 20;

/// A rectangle of a quantized layer's matrix handled at once: `rows` rows from `row`, `cols`
/// columns from `col`, whole quantization groups.
struct layer_piece {
  std::uint64_t row = 0;
  std::uint64_t col = 0;
  std::uint64_t rows = 0;
  std::uint64_t cols = 0;
};

/// How a [rows, cols] layer (both above 0) is cut into pieces of about mlx_chunk_bytes when a column costs
/// `column_bytes`: whole rows while a row fits, else parts of one row of whole groups, so
/// memory stays bounded however long a row is. `rows` x `cols` is the largest piece (for
/// sizing buffers once).
[[nodiscard]] inline layer_piece layer_piece_size(std::uint64_t rows, std::uint64_t cols, std::uint64_t group,
                                                  std::uint64_t column_bytes) {
  const std::uint64_t fitting_cols =
      std::max<std::uint64_t>(1, mlx_chunk_bytes / std::max<std::uint64_t>(1, column_bytes));
  if (cols <= fitting_cols) return {0, 0, std::min(fitting_cols / cols, rows), cols};
  return {0, 0, 1, std::min(std::max<std::uint64_t>(1, fitting_cols / group) * group, cols)};
}

/// Visits the pieces of a [rows, cols] layer of pieces at most `size` (layer_piece_size), in
/// row-major order; the first failure `visit` returns ends the walk.
template <class Visit>
status for_each_layer_piece(std::uint64_t rows, std::uint64_t cols, const layer_piece& size, Visit&& visit) {
  for (std::uint64_t r = 0; r < rows; r += size.rows) {
    for (std::uint64_t c = 0; c < cols; c += size.cols) {
      if (auto s = visit(layer_piece{r, c, std::min(size.rows, rows - r), std::min(size.cols, cols - c)}); !s) return s;
    }
  }
  return {};
}

class mlx_input {
 public:
  /// `c` as opened from `path` (a file, directory or index); `on_warning` hears the
  /// `__metadata__` keys its shards disagree on.
  [[nodiscard]] static result<mlx_input> make(checkpoint c, const std::string& path, const warning_handler& on_warning);

  /// True for a directory or an index (even of one shard): the output is then a directory.
  [[nodiscard]] bool directory_output() const noexcept { return directory_output_; }
  /// Every tensor of the input (for a sharded one: byte offsets are meaningless) and the
  /// `__metadata__` its shards share.
  [[nodiscard]] const safetensors::header& header() const noexcept {
    return combined_ ? *combined_ : checkpoint_.shards()[0].file.header();
  }
  [[nodiscard]] const checkpoint& source() const noexcept { return checkpoint_; }
  /// A path in the checkpoint's directory, for finding config.json beside it.
  [[nodiscard]] const std::string& anchor() const noexcept { return anchor_; }
  /// Reads `destination.size()` bytes of tensor `name` from byte `offset` of its data.
  [[nodiscard]] status read(std::string_view name, std::uint64_t offset, std::span<std::byte> destination) const;
  /// Passes tensor `name`'s bytes to `sink` unchanged, a few MiB at a time.
  [[nodiscard]] status copy(std::string_view name, const chunk_sink& sink) const;

 private:
  checkpoint checkpoint_;
  std::optional<safetensors::header> combined_;
  std::string anchor_;
  bool directory_output_ = false;
};

/// The input, its MLX description (config.json beside it read) and the warnings found.
struct mlx_job {
  mlx_input in;
  mlx::checkpoint_info info;
  std::vector<std::string> warnings;
};

[[nodiscard]] result<mlx_job> open_mlx_job(checkpoint c, const std::string& path, const warning_handler& on_warning);

/// Writes `specs` into the directory `out` as a sharded checkpoint (write_checkpoint_output),
/// keeping the input index's extra metadata.
[[nodiscard]] status write_sharded(const std::string& out, const mlx_input& in, std::span<const tensor_spec> specs,
                                   const tensor_producer& produce, std::uint64_t max_shard_bytes,
                                   const std::optional<metadata_map>& metadata);

/// The output budget (output_check.h) on the tensors `specs` plan, against the size of the
/// input's shards: LimitExceeded before anything is written.
[[nodiscard]] status check_budget(const mlx_input& in, std::span<const tensor_spec> specs,
                                  std::uint64_t max_output_bytes, const std::string& out);

/// Counts input bytes consumed against `total`; advance() is false once `progress` cancels.
class byte_progress {
 public:
  byte_progress(progress_callback progress, std::uint64_t total) : progress_(std::move(progress)), total_(total) {}
  [[nodiscard]] status advance(std::uint64_t bytes);

 private:
  progress_callback progress_;
  std::uint64_t total_;
  std::uint64_t done_ = 0;
};

/// A sink appending to tensor `name` of `out`.
[[nodiscard]] chunk_sink append_to(stream_writer& out, std::string name);

}  // namespace safetensors::pipeline::detail
