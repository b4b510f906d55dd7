// SPDX-License-Identifier: Apache-2.0
// pytorch_model.bin.index.json has the schema of a SafeTensors index, so the core's
// index parser and shard-name confinement serve both.
#include <algorithm>
#include <filesystem>

#include "checkpoint/index.h"
#include "safetensors/formats/pytorch.h"

namespace safetensors {

result<torch_shard_index> read_torch_shard_index(const std::string& directory_or_index) {
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(directory_or_index, ec);
  const std::string index_path =
      is_dir ? (std::filesystem::path(directory_or_index) / "pytorch_model.bin.index.json").string()
             : directory_or_index;
  const std::string directory = is_dir ? directory_or_index : detail::parent_directory(directory_or_index);
  auto parsed = detail::read_index(index_path, std::uint64_t{256} << 20);
  if (!parsed) {
    error e = std::move(parsed).err();
    if (e.path.empty()) e.path = index_path;
    return e;
  }
  torch_shard_index out;
  for (const auto& [tensor, shard] : parsed->weight_map) {
    auto path = detail::confined_shard_path(directory, shard);
    if (!path) {
      error e = std::move(path).err();
      e.path = index_path;
      return e;
    }
    out.weight_map.emplace_back(tensor, *path);
    out.shard_paths.push_back(*path);
  }
  std::sort(out.shard_paths.begin(), out.shard_paths.end());
  out.shard_paths.erase(std::unique(out.shard_paths.begin(), out.shard_paths.end()), out.shard_paths.end());
  return out;
}

}  // namespace safetensors
