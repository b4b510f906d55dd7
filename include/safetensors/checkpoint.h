// SPDX-License-Identifier: Apache-2.0
/// \file checkpoint.h
/// A checkpoint: one SafeTensors file, or several shards tied together by an index
/// (the huggingface_hub convention), seen as one tensor namespace.
///
/// Layout of a sharded checkpoint:
///
///     model.safetensors.index.json
///         {"metadata": {"total_size": <sum of tensor bytes>, ...},
///          "weight_map": {"<tensor>": "model-00001-of-00002.safetensors", ...}}
///     model-00001-of-00002.safetensors
///     model-00002-of-00002.safetensors
///
/// A single-shard checkpoint is just `model.safetensors`, without an index. Checking a
/// checkpoint and reporting every problem: checkpoint_verify.h; writing one:
/// checkpoint_write.h; the index itself: checkpoint_index.h.
///
/// Security: shard names from an index must stay inside the index's directory: empty
/// names, NUL bytes, absolute paths, drive letters, backslashes, `..` components and
/// symlinks resolving outside the directory are `UnsafePath`. The index is parsed with
/// duplicate-key rejection at every level and a size cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/header.h"
#include "safetensors/lifetimebound.h"

namespace safetensors {

class checkpoint_store;

/// Index files above this are refused (the largest real indexes are about 15 MB).
inline constexpr std::uint64_t default_max_index_bytes = 100'000'000;

struct checkpoint_options {
  open_options shard;  ///< backend and validation policy for every shard
  std::uint64_t max_index_bytes = default_max_index_bytes;
};

/// One shard: its name as the index spells it, and the open file.
struct checkpoint_shard {
  std::string name;  ///< relative to the checkpoint directory
  safetensors::file file;
};

/// Where a tensor lives.
struct tensor_location {
  std::string_view name;
  std::size_t shard = 0;  ///< index into checkpoint::shards()
  const tensor_info* info = nullptr;
};

/// An open checkpoint. Move-only; tensor_info pointers stay valid while it lives.
///
/// Opening checks everything that makes the namespace well defined and fails with the
/// first problem (ShardMismatch, UnsafePath, InvalidIndex, DuplicateKey, or the shard's
/// own error); a wrong metadata.total_size is only a warning (see warnings()).
/// `verify_checkpoint` reports every problem, total_size included, as an error.
class checkpoint {
 public:
  /// `path` is a `.safetensors` file, an index `.json`, or a directory holding exactly
  /// one `*.safetensors.index.json` or, failing that, exactly one `*.safetensors`.
  [[nodiscard]] static result<checkpoint> open(const std::string& path, const checkpoint_options& options = {});
  /// The same from `store` (checkpoint_store.h), which interprets `path`.
  [[nodiscard]] static result<checkpoint> open(const std::string& path, const checkpoint_options& options,
                                               const checkpoint_store& store);

  /// The directory shard names are relative to.
  [[nodiscard]] const std::string& directory() const noexcept { return directory_; }
  /// The index file; empty for a single-file checkpoint.
  [[nodiscard]] const std::string& index_path() const noexcept { return index_path_; }
  [[nodiscard]] bool sharded() const noexcept { return !index_path_.empty(); }

  // Views into the checkpoint: not callable on a temporary, and flagged by clang when they
  // outlive it.
  [[nodiscard]] std::span<const checkpoint_shard> shards() const& noexcept SAFETENSORS_LIFETIMEBOUND { return shards_; }
  std::span<const checkpoint_shard> shards() const&& = delete;
  /// Every tensor, sorted by name.
  [[nodiscard]] std::span<const tensor_location> tensors() const& noexcept SAFETENSORS_LIFETIMEBOUND {
    return tensors_;
  }
  std::span<const tensor_location> tensors() const&& = delete;
  [[nodiscard]] const tensor_location* find(std::string_view name) const& noexcept SAFETENSORS_LIFETIMEBOUND;
  const tensor_location* find(std::string_view name) const&& = delete;
  [[nodiscard]] const safetensors::file& file_of(const tensor_location& t) const& noexcept SAFETENSORS_LIFETIMEBOUND {
    return shards_[t.shard].file;
  }
  const safetensors::file& file_of(const tensor_location& t) const&& = delete;

  /// The index's "metadata" object: strings verbatim, other values as JSON text
  /// (total_size appears as its decimal digits). Empty for a single file.
  [[nodiscard]] const metadata_map& index_metadata() const& noexcept SAFETENSORS_LIFETIMEBOUND {
    return index_metadata_;
  }
  const metadata_map& index_metadata() const&& = delete;
  /// metadata.total_size when the index has one.
  [[nodiscard]] std::optional<std::uint64_t> total_size() const noexcept { return total_size_; }
  /// Sum of all tensors' byte sizes.
  [[nodiscard]] std::uint64_t data_size() const noexcept { return data_size_; }
  /// Problems opening tolerates (a metadata.total_size that differs from the tensors' sum),
  /// one line each with the index path; `verify_checkpoint` reports them as errors.
  [[nodiscard]] std::span<const std::string> warnings() const noexcept { return warnings_; }

  /// Copies a tensor's bytes (see file::read_into). Errors: TensorNotFound, IoError.
  [[nodiscard]] status read_into(std::string_view name, std::span<std::byte> destination) const;

 private:
  friend struct checkpoint_builder;
  std::string directory_;
  std::string index_path_;
  std::vector<checkpoint_shard> shards_;
  std::vector<tensor_location> tensors_;
  std::vector<std::string> names_;  // owns weight_map keys for tensor_location::name
  metadata_map index_metadata_;
  std::optional<std::uint64_t> total_size_;
  std::uint64_t data_size_ = 0;
  std::vector<std::string> warnings_;
};

}  // namespace safetensors
