// SPDX-License-Identifier: Apache-2.0
// Internal: the steps shared by checkpoint::open (stop at the first problem) and
// verify_checkpoint (collect them all): resolving the path, opening the shards, and
// cross-checking the weight_map against what the shards hold. Both run over a
// checkpoint_store: the local filesystem here, a server in src/remote.
#pragma once

#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "checkpoint/index.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/range_reader.h"

namespace safetensors::detail {

/// What a user path names.
struct checkpoint_target {
  std::string directory;
  std::string index_path;   ///< set for an index
  std::string single_file;  ///< set for one .safetensors file
};

/// Resolves a file, index or directory. Errors: IoError, InvalidArgument (ambiguous directory).
[[nodiscard]] result<checkpoint_target> resolve_checkpoint_path(const std::string& path);

/// Distinct shard names of a weight_map, sorted.
[[nodiscard]] std::vector<std::string> shard_names(const checkpoint_index& index);

/// Returns false to stop.
using issue_sink = std::function<bool(checkpoint_problem, error)>;

/// Cross-checks `index` against the opened shards (`files[i]` null when shard i failed,
/// in which case its tensors are not judged). `names` as from shard_names().
void cross_check(const checkpoint_index& index, const std::vector<std::string>& names,
                 const std::vector<const file*>& files, const std::string& directory, const issue_sink& sink);

}  // namespace safetensors::detail

namespace safetensors::detail {

/// A file read in order, in pieces of `piece_bytes`.
struct sequential_file {
  std::shared_ptr<const range_reader> reader;
  std::size_t piece_bytes = 0;
};

/// Where a checkpoint's index and shards come from. Implementations are thread-safe.
class checkpoint_store {
 public:
  checkpoint_store() = default;
  checkpoint_store(const checkpoint_store&) = delete;
  checkpoint_store& operator=(const checkpoint_store&) = delete;
  virtual ~checkpoint_store() = default;

  /// What `path` names: a single file, an index, or a directory holding one of them.
  [[nodiscard]] virtual result<checkpoint_target> resolve(const std::string& path) const = 0;
  /// Reads and parses an index of at most `max_bytes`.
  [[nodiscard]] virtual result<checkpoint_index> read_index(const std::string& path, std::uint64_t max_bytes) const = 0;
  /// Where shard `name` of `directory` is, once checked to stay inside it. Errors: UnsafePath.
  [[nodiscard]] virtual result<std::string> shard_path(const std::string& directory, std::string_view name) const = 0;
  /// Opens every path (concurrently where that helps); one result per path, in order.
  [[nodiscard]] virtual std::vector<result<file>> open_files(std::span<const std::string> paths,
                                                             const open_options& options) const = 0;
  /// Opens a whole file to be read from start to end (verify's digests), with the piece size
  /// that suits the store. The reader's name() is what progress reports show.
  [[nodiscard]] virtual result<sequential_file> open_sequential(const std::string& path) const = 0;
};

/// The local filesystem.
[[nodiscard]] const checkpoint_store& local_store();

/// checkpoint::open and verify_checkpoint over any store.
[[nodiscard]] result<checkpoint> open_checkpoint(const std::string& path, const checkpoint_options& options,
                                                 const checkpoint_store& store);
[[nodiscard]] result<verify_report> verify_checkpoint(const std::string& path, const verify_options& options,
                                                      const checkpoint_store& store);

}  // namespace safetensors::detail
