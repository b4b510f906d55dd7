// SPDX-License-Identifier: Apache-2.0
// Helpers shared by the checkpoint subcommands (shard, merge): collecting tensors of open
// checkpoints as writer input, and reconciling their shards' `__metadata__`.
#pragma once

#include <optional>
#include <span>
#include <vector>

#include "report.h"
#include "rewrite.h"
#include "safetensors/checkpoint.h"
#include "safetensors/writer.h"

namespace st_cli {

/// Opens a checkpoint with the pread backend: nothing mapped, so memory stays bounded
/// whatever its size.
[[nodiscard]] safetensors::result<safetensors::checkpoint> open_streamed(const std::string& path);

/// Every tensor of `c`, unchanged, in shard order then file order.
void append_tensors(const safetensors::checkpoint& c, std::vector<output_tensor>& out);

/// The `__metadata__` all shards of all checkpoints share: kept when identical; otherwise
/// the keys whose values agree, with a warning on stderr naming the dropped ones.
std::optional<safetensors::metadata_map> common_metadata(std::span<const safetensors::checkpoint> inputs);

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
