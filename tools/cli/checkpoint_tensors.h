// SPDX-License-Identifier: Apache-2.0
// Reading commands (inspect, ls, meta, stats, dump, checksum) over a file, a checkpoint
// directory or an index alike: open it by pread, warn about what opening tolerated, pick
// tensors across shards.
#pragma once

#include <string>
#include <vector>

#include "safetensors/checkpoint.h"

namespace st_cli {

/// Opens `path` (file, directory or index) with the pread backend (headers now, data on
/// request) and prints the checkpoint's warnings (a wrong total_size) to stderr.
[[nodiscard]] safetensors::result<safetensors::checkpoint> open_checkpoint_input(const std::string& path);

/// Prints what opening `c` tolerated (a wrong total_size) as warnings on stderr.
void print_checkpoint_warnings(const safetensors::checkpoint& c);

/// A tensor and the shard file holding it.
struct shard_tensor {
  const safetensors::file* file = nullptr;
  const safetensors::tensor_info* info = nullptr;
};

/// Tensors of `c`, shard by shard in file order, that match some `only` pattern (all when
/// empty) and no `exclude` pattern. An `only` pattern matching no tensor is TensorNotFound.
[[nodiscard]] safetensors::result<std::vector<shard_tensor>> select_checkpoint_tensors(
    const safetensors::checkpoint& c, const std::vector<std::string>& only, const std::vector<std::string>& exclude);

}  // namespace st_cli
