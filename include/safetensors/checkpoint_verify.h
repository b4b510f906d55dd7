// SPDX-License-Identifier: Apache-2.0
/// \file checkpoint_verify.h
/// Verifying a checkpoint: every problem of an index and its shards collected, with optional
/// digests of the shard files (`safetensors verify`; SHA-256 from component sha256).
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/error.h"
#include "safetensors/hasher.h"

namespace safetensors {

class checkpoint_store;

/// What `verify_checkpoint` can find wrong. Each problem carries an `error` naming the
/// tensor and, in `error::path`, the shard.
enum class checkpoint_problem : std::uint8_t {
  tensor_missing_from_shard,  ///< weight_map names a shard that lacks the tensor
  tensor_in_several_shards,   ///< the tensor is stored in more than one shard
  tensor_not_in_weight_map,   ///< a shard stores a tensor the weight_map does not list
  total_size_mismatch,        ///< metadata.total_size differs from the sum of tensor bytes
  shard_invalid,              ///< the shard cannot be opened or fails validation
};

/// Reports hashing progress: `done` of `size` bytes of shard file `path` hashed so far.
using hash_progress = std::function<void(const std::string& path, std::uint64_t done, std::uint64_t size)>;

struct verify_options {
  checkpoint_options open;
  /// When set, every shard file is also hashed whole (shard_report::digest) by a hasher it
  /// makes: `safetensors::make_sha256_hasher` (sha256.h, component sha256) for SHA-256.
  hasher_factory digest;
  hash_progress on_hashed;  ///< called after each piece hashed (a few MiB), when set
};

struct shard_report {
  std::string name;
  std::string path;
  bool ok = false;
  std::uint64_t tensors = 0;
  std::uint64_t file_size = 0;
  std::string digest;  ///< lowercase hex (verify_options::digest); empty unless requested and readable
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
/// The same from `store` (checkpoint_store.h), which interprets `path`.
[[nodiscard]] result<verify_report> verify_checkpoint(const std::string& path, const verify_options& options,
                                                      const checkpoint_store& store);

}  // namespace safetensors
