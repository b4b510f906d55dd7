// SPDX-License-Identifier: Apache-2.0
// Checkpoints (a directory or an index) for the reading subcommands: their shards' common
// `__metadata__`, and inspect and validate of a whole checkpoint.
#pragma once

#include <optional>

#include "report.h"
#include "safetensors/checkpoint.h"

namespace st_cli {

/// The `__metadata__` all shards of `c` share: kept when identical; otherwise the keys whose
/// values agree, with a warning on stderr naming the dropped ones (pipeline::common_metadata).
std::optional<safetensors::metadata_map> common_metadata(const safetensors::checkpoint& c);

}  // namespace st_cli

namespace st_cli {

/// True for a directory or an index (`.json`): paths `inspect` and `validate` treat as
/// checkpoints.
[[nodiscard]] bool is_checkpoint_path(const std::string& path);

/// `inspect` of a checkpoint: summary, shards and a tensor table with each tensor's shard
/// (or, with `json`, one object with the index metadata and every shard's header).
run_result inspect_checkpoint(const std::string& path, bool json);

/// `validate` of a checkpoint: every index/shard problem, one line each (or one JSON line
/// in validate's format, the first problem as the error). Returns the exit status.
int validate_checkpoint(const std::string& path, safetensors::validation_policy policy, bool json);

}  // namespace st_cli
