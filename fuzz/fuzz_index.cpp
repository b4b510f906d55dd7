// SPDX-License-Identifier: Apache-2.0
// The checkpoint index JSON (model.safetensors.index.json). Properties: an accepted
// weight_map is sorted with unique tensor names; every shard name the confinement check
// accepts stays inside the directory (no '..', absolute path, backslash or NUL).
#include <algorithm>

#include "fuzz_support.h"
#include "safetensors/checkpoint_index.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  auto index = parse_checkpoint_index(st_fuzz::as_bytes(data, size));
  if (!index) return 0;
  const auto& map = index->weight_map;
  ST_FUZZ_CHECK(std::is_sorted(map.begin(), map.end()));
  ST_FUZZ_CHECK(std::adjacent_find(map.begin(), map.end(), [](auto& a, auto& b) { return a.first == b.first; }) ==
                map.end());
  ST_FUZZ_CHECK(!index->total_size || index->metadata.count("total_size") == 1);
  for (const auto& [tensor, shard] : map) {
    auto path = confined_shard_path("/nonexistent-st-fuzz", shard);
    if (!path) continue;
    const std::string inner = "/" + shard + "/";
    ST_FUZZ_CHECK(*path == "/nonexistent-st-fuzz/" + shard && shard.front() != '/');
    ST_FUZZ_CHECK(inner.find("/../") == std::string::npos &&
                  shard.find_first_of(std::string("\\\0", 2)) == std::string::npos);
  }
  return 0;
}
