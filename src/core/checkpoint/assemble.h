// SPDX-License-Identifier: Apache-2.0
// Internal: the steps shared by checkpoint::open (stop at the first problem) and
// verify_checkpoint (collect them all): resolving a local path, and cross-checking the
// weight_map against what the shards hold. Both run over a checkpoint_store (public).
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
#include "safetensors/checkpoint_store.h"
#include "safetensors/checkpoint_verify.h"

namespace safetensors::detail {

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
