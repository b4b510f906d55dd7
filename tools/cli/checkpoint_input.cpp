// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_input.h"

#include "report.h"
#include "safetensors/pipeline/selection.h"

namespace st_cli {

std::optional<safetensors::metadata_map> common_metadata(const safetensors::checkpoint& c) {
  std::vector<std::optional<safetensors::metadata_map>> all;
  for (const auto& shard : c.shards()) all.push_back(shard.file.header().metadata());
  return safetensors::pipeline::common_metadata(all, print_warning);
}

}  // namespace st_cli
