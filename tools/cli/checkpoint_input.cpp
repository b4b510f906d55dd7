// SPDX-License-Identifier: Apache-2.0
// Tensors and metadata of open checkpoints, as input for writing new files.
#include "checkpoint_input.h"

#include <fmt/format.h>

#include "remote_input.h"

namespace st_cli {

safetensors::result<safetensors::checkpoint> open_streamed(const std::string& path) {
  safetensors::checkpoint_options options;
  options.shard.backend = safetensors::io_backend::pread;
  return open_checkpoint_at(path, options);
}

void append_tensors(const safetensors::checkpoint& c, std::vector<output_tensor>& out) {
  for (const auto& shard : c.shards()) {
    for (const auto& t : shard.file.tensors()) out.push_back({&shard.file, &t, std::string(t.name), t.type});
  }
}

std::optional<safetensors::metadata_map> common_metadata(std::span<const safetensors::checkpoint> inputs) {
  std::optional<safetensors::metadata_map> merged;
  bool first = true;
  std::vector<std::string> dropped;
  for (const auto& c : inputs) {
    for (const auto& shard : c.shards()) {
      const auto& m = shard.file.meta().metadata();
      if (first) {
        merged = m;
        first = false;
        continue;
      }
      if (merged == m) continue;
      if (!merged || !m) {
        if (merged) {
          for (const auto& kv : *merged) dropped.push_back(kv.first);
        }
        merged.reset();
        continue;
      }
      for (auto it = merged->begin(); it != merged->end();) {
        auto other = m->find(it->first);
        if (other == m->end() || other->second != it->second) {
          dropped.push_back(it->first);
          it = merged->erase(it);
        } else {
          ++it;
        }
      }
    }
  }
  if (!dropped.empty()) {
    fmt::print(stderr, "safetensors: warning: __metadata__ keys differing between shards are dropped: {}\n",
               fmt::join(dropped, ", "));
  }
  return merged;
}

}  // namespace st_cli
