// SPDX-License-Identifier: Apache-2.0
// Where a pipeline reads: every input format (SafeTensors, PyTorch, NumPy, GGUF) behind one
// small interface, so conversion is N readers + M writers (tensor_sink.h), not N x M paths.
// A source lists its tensors (name, dtype, shape), its metadata as `__metadata__` text and
// notes for the user, and streams each tensor's bytes (C order, little-endian) in bounded
// chunks. Decorators cast floating tensors and report progress on the way.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/chunk_sink.h"
#include "safetensors/convert.h"
#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/formats/npz.h"
#include "safetensors/header.h"
#include "safetensors/pipeline/tensor_filter.h"

namespace safetensors::pipeline {

/// One tensor as its source yields it.
struct source_tensor {
  std::string name;
  dtype type = dtype::F32;
  std::vector<std::uint64_t> shape;

  [[nodiscard]] std::uint64_t byte_size() const;
  [[nodiscard]] std::uint64_t element_count() const;
};

/// Receives each lossy or surprising step as it happens ("dropped __metadata__", "skipped
/// optimizer"), so a tool can print it at once; pipelines also list them in their summary.
using warning_handler = std::function<void(std::string_view)>;

class tensor_source {
 public:
  virtual ~tensor_source() = default;

  /// The format's name for messages and the summary: "SafeTensors", "PyTorch", "GGUF", ...
  [[nodiscard]] const std::string& format() const noexcept { return format_; }
  /// The format table's id of the format (format_table.h): "safetensors", "pytorch", ...; what
  /// option checks ask about. Empty for a source of no row.
  [[nodiscard]] const std::string& format_id() const noexcept { return format_id_; }
  /// The file, directory or URL read.
  [[nodiscard]] const std::string& path() const noexcept { return path_; }
  /// Tensors in the order they are read (the input's order).
  [[nodiscard]] const std::vector<source_tensor>& tensors() const noexcept { return tensors_; }
  /// `__metadata__` text: SafeTensors' own, GGUF's with its types recorded (gguf_metadata.h),
  /// PyTorch's {"format": "pt"} and dedup aliases; nullopt when there is none.
  [[nodiscard]] const std::optional<metadata_map>& metadata() const noexcept { return metadata_; }
  /// What the user should know: skipped entries, shared storages, dequantized tensors.
  [[nodiscard]] const std::vector<std::string>& notes() const noexcept { return notes_; }
  /// A sharded input: the size of its largest shard, so a sharded output mirrors it; 0 otherwise.
  [[nodiscard]] std::uint64_t shard_bytes() const noexcept { return shard_bytes_; }
  /// The size of what the source reads: its files' sizes, an .npz's deflated members counted
  /// at their inflated size (the zip-bomb limits bound it). What the output budget
  /// (output_check.h) is measured against.
  [[nodiscard]] std::uint64_t input_bytes() const noexcept { return input_bytes_; }

  /// Passes tensor `index`'s bytes to `consume`, in order, in chunks of at most a few MiB.
  /// Chunks need not end on element boundaries. Stops at the first error.
  [[nodiscard]] virtual status read(std::size_t index, const chunk_sink& consume) const = 0;

 protected:
  std::string format_;
  std::string format_id_;
  std::string path_;
  std::vector<source_tensor> tensors_;
  std::optional<metadata_map> metadata_;
  std::vector<std::string> notes_;
  std::uint64_t shard_bytes_ = 0;
  std::uint64_t input_bytes_ = 0;
};

using source_ptr = std::unique_ptr<tensor_source>;

/// PyTorch tensors that view the same storage: each written as a copy (`keep`), or a tensor
/// that is exactly the same view as an earlier one written once, its name mapped to the kept
/// one in `__metadata__` as the reference's save_model does (`dedup`).
enum class shared_tensors : std::uint8_t { keep, dedup };

/// What shapes reading. The PyTorch and .npz fields apply to those inputs only.
struct source_options {
  std::string key;                               ///< PyTorch: the nested dict holding the tensors
  shared_tensors shared = shared_tensors::keep;  ///< PyTorch: tied storages
  bool strict = false;                           ///< PyTorch: refuse skipped objects instead of warning
  numpy::npz_options npz;                        ///< .npz: zip-bomb limits
  warning_handler on_warning;                    ///< null: warnings are only in notes()
};

/// Opens `path` as the source its bytes say it is (the format table's row whose sniff claims
/// them, else a row without magic bytes by extension: format_of_file). A directory or a
/// `*.bin.index.json` / `*.pt.index.json` is a sharded PyTorch checkpoint (convert_input.h
/// resolves the rest).
[[nodiscard]] result<source_ptr> open_source(const std::string& path, const source_options& options = {});
/// The readers of the format table's rows (source_<format>.cpp).
[[nodiscard]] result<source_ptr> open_safetensors_source(const std::string& path);
/// A SafeTensors checkpoint: its directory or its index (a directory holding one file is that
/// file). `on_warning` hears what opening tolerated and `__metadata__` keys the shards disagree on.
[[nodiscard]] result<source_ptr> open_checkpoint_source(const std::string& path,
                                                        const warning_handler& on_warning = {});
/// An opened SafeTensors file of any backend (a remote one included): read in chunks.
[[nodiscard]] source_ptr safetensors_source(file f);
/// An opened SafeTensors checkpoint of any store (a remote one included): its shards as one
/// source. `on_warning` hears what opening tolerated and `__metadata__` keys the shards disagree on.
[[nodiscard]] source_ptr checkpoint_source(checkpoint c, const warning_handler& on_warning = {});
[[nodiscard]] result<source_ptr> open_pytorch_source(const std::string& path, const source_options& options = {});
[[nodiscard]] result<source_ptr> open_numpy_source(const std::string& path, const numpy::npz_options& npz = {});
[[nodiscard]] result<source_ptr> open_gguf_source(const std::string& path);

/// Bytes per chunk when streaming a SafeTensors tensor: a multiple of 24, so every chunk
/// boundary falls between whole elements (8-byte types, and 3-byte groups of four F6 values).
inline constexpr std::size_t chunk_bytes = std::size_t{24} << 17;  // 3 MiB

/// Passes tensor `t` of `f` to `consume` in pieces of at most `max_bytes`, read into
/// `buffer` (pread, a mapping or a remote range: whatever `f`'s backend does). Errors name
/// the tensor. `max_bytes` must hold whole elements (whole groups of sub-byte elements).
[[nodiscard]] status read_tensor_chunks(const file& f, const tensor_info& t, std::vector<std::byte>& buffer,
                                        const chunk_sink& consume, std::size_t max_bytes = chunk_bytes);

/// `inner` with every floating tensor (complex excepted) that `which` selects cast to `to`,
/// chunk by chunk (`encode`: F8 saturation); other tensors pass unchanged. A pattern of
/// `which` that matches no tensor is an error (tensor_filter::require_matches).
[[nodiscard]] result<source_ptr> cast_source(source_ptr inner, dtype to, const tensor_filter& which = {},
                                             const encode_options& encode = {});

/// Told the bytes done and the total as a pipeline reads; returning false stops it with
/// error_code::cancelled (a Ctrl-C in a binding, a stop button in a user interface).
using progress_callback = std::function<bool(std::uint64_t done, std::uint64_t total)>;

/// `inner`, calling `progress` after each chunk it reads.
[[nodiscard]] source_ptr observed_source(source_ptr inner, progress_callback progress);

/// Bytes of all tensors of `source`.
[[nodiscard]] std::uint64_t total_bytes(const tensor_source& source);

}  // namespace safetensors::pipeline
