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
/// A single-shard checkpoint is just `model.safetensors`, without an index.
///
/// Security: shard names from an index must stay inside the index's directory: empty
/// names, NUL bytes, absolute paths, drive letters, backslashes, `..` components and
/// symlinks resolving outside the directory are `UnsafePath`. The index is parsed with
/// duplicate-key rejection at every level and a size cap.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/header.h"
#include "safetensors/lifetimebound.h"
#include "safetensors/writer.h"

namespace safetensors {

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

/// What `verify_checkpoint` can find wrong. Each problem carries an `error` naming the
/// tensor and, in `error::path`, the shard.
enum class checkpoint_problem : std::uint8_t {
  tensor_missing_from_shard,  ///< weight_map names a shard that lacks the tensor
  tensor_in_several_shards,   ///< the tensor is stored in more than one shard
  tensor_not_in_weight_map,   ///< a shard stores a tensor the weight_map does not list
  total_size_mismatch,        ///< metadata.total_size differs from the sum of tensor bytes
  shard_invalid,              ///< the shard cannot be opened or fails validation
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

/// Reports hashing progress: `done` of `size` bytes of shard file `path` hashed so far.
using hash_progress = std::function<void(const std::string& path, std::uint64_t done, std::uint64_t size)>;

struct verify_options {
  checkpoint_options open;
  bool checksums = false;   ///< also compute SHA-256 of every shard file
  hash_progress on_hashed;  ///< called after each piece hashed (a few MiB), when set
};

struct shard_report {
  std::string name;
  std::string path;
  bool ok = false;
  std::uint64_t tensors = 0;
  std::uint64_t file_size = 0;
  std::string sha256;  ///< lowercase hex; empty unless requested and readable
};

struct checkpoint_issue {
  checkpoint_problem kind;
  safetensors::error error;
};

struct verify_report {
  std::string index_path;  ///< empty for a single file
  std::vector<shard_report> shards;
  std::vector<checkpoint_issue> issues;
  std::uint64_t tensors = 0;
  std::uint64_t data_size = 0;
  [[nodiscard]] bool ok() const noexcept { return issues.empty(); }
};

/// Checks an index against its shards and every shard against the policy, collecting
/// every problem. Fails outright only when the index itself is unusable (unreadable,
/// malformed, duplicate keys) or the path cannot be resolved.
[[nodiscard]] result<verify_report> verify_checkpoint(const std::string& path, const verify_options& options = {});

/// Parses a size with decimal or binary units: "5GB" = 5,000,000,000, "500MB",
/// "2GiB" = 2 * 2^30, "1.5GB", "123" (bytes), "10KB"/"10kB". Errors: InvalidArgument.
[[nodiscard]] result<std::uint64_t> parse_byte_size(std::string_view text);

/// The huggingface_hub default, 5GB.
inline constexpr std::uint64_t default_max_shard_bytes = 5'000'000'000;

struct shard_write_options {
  std::uint64_t max_shard_bytes = default_max_shard_bytes;
  std::string prefix = "model";  ///< file names: <prefix>-00001-of-00003.safetensors
  write_options file;            ///< alignment and `__metadata__` of every shard
  metadata_map index_metadata;   ///< extra "metadata" keys of the index besides total_size
};

/// How tensors split into shards: huggingface_hub's greedy rule in the given order. A
/// new shard starts when the next tensor would push the current one past the limit; a
/// tensor larger than the limit gets a shard of its own, emitted at once (the shard
/// being filled continues after it).
struct shard_assignment {
  std::vector<std::vector<std::size_t>> shards;  ///< indices into the input, per shard
  std::vector<std::string> file_names;
};
[[nodiscard]] result<shard_assignment> assign_shards(std::span<const tensor_spec> tensors,
                                                     const shard_write_options& options = {});

/// Writes a checkpoint into `directory` (which must exist). One shard gives
/// `<prefix>.safetensors` and no index; more give numbered shards plus
/// `<prefix>.safetensors.index.json` (weight_map sorted, indent 2, trailing newline).
///
/// Atomicity: every file is written to a temporary in `directory` and fsynced first; any
/// failure up to that point removes the temporaries and leaves the directory unchanged.
/// Then the shards are renamed into place and the index last, so an index never names a
/// shard that is not complete. A rename can only fail after all data is safely on disk;
/// if one does, the files renamed before it stay (replacing same-named files), the rest
/// are removed, and the error names the file. Other files in `directory` (e.g. shards of
/// an older checkpoint with more shards) are never touched. Returns the assignment used.
[[nodiscard]] result<shard_assignment> write_checkpoint(const std::string& directory,
                                                        std::span<const tensor_data> tensors,
                                                        const shard_write_options& options = {});

/// Receives the next chunk of the tensor being produced.
using chunk_sink = std::function<status(std::span<const std::byte>)>;
/// Produces tensor `index` (into the spec list) by passing its bytes, in order, to `sink`.
using tensor_producer = std::function<status(std::size_t index, const chunk_sink& sink)>;

/// The same, with tensors produced on demand in chunks, so memory stays bounded by the
/// producer's chunks. Tensors are produced one at a time, in the order of `tensors`; a
/// producer that passes more or fewer bytes than the dtype and shape need fails the write
/// (InvalidArgument), as does any error it returns, leaving the directory unchanged.
[[nodiscard]] result<shard_assignment> write_checkpoint(const std::string& directory,
                                                        std::span<const tensor_spec> tensors,
                                                        const tensor_producer& produce,
                                                        const shard_write_options& options = {});

}  // namespace safetensors
