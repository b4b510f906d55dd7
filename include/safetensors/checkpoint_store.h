// SPDX-License-Identifier: Apache-2.0
/// \file checkpoint_store.h
/// Where a checkpoint's index and shards come from: the local filesystem
/// (local_checkpoint_store()), a server (the remote library), or a store of your own.
/// checkpoint::open and verify_checkpoint take one; their plain forms use the local store.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/checkpoint_index.h"
#include "safetensors/file.h"
#include "safetensors/range_reader.h"

namespace safetensors {

/// What a user path names: one SafeTensors file, or an index and the directory of its shards.
struct checkpoint_target {
  std::string directory;
  std::string index_path;   ///< set for an index
  std::string single_file;  ///< set for one .safetensors file
};

/// A file read in order, in pieces of `piece_bytes` (verify's digests).
struct sequential_file {
  std::shared_ptr<const range_reader> reader;
  std::size_t piece_bytes = 0;
};

/// The operations a checkpoint needs of where it is stored. Implementations are thread-safe.
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
  /// Opens a whole file to be read from start to end, with the piece size that suits the
  /// store. The reader's name() is what progress reports show.
  [[nodiscard]] virtual result<sequential_file> open_sequential(const std::string& path) const = 0;
};

/// The local filesystem: paths, not URLs.
[[nodiscard]] const checkpoint_store& local_checkpoint_store();

}  // namespace safetensors
