// SPDX-License-Identifier: Apache-2.0
// pytorch_model.bin.index.json has the schema of a SafeTensors index, so the core's
// index parser and shard-name confinement serve both.
#include <algorithm>
#include <filesystem>

#include "safetensors/checkpoint_index.h"
#include "safetensors/formats/pytorch.h"

namespace safetensors::torch {
namespace {

// The index file's directory ("." for a bare file name), where its shard names resolve.
std::string index_directory(const std::string& index_path) {
  const auto parent = std::filesystem::path(index_path).parent_path();
  return parent.empty() ? std::string(".") : parent.string();
}

}  // namespace

result<shard_index> read_shard_index(const std::string& directory_or_index) {
  std::error_code ec;
  const bool is_dir = std::filesystem::is_directory(directory_or_index, ec);
  const std::string index_path =
      is_dir ? (std::filesystem::path(directory_or_index) / "pytorch_model.bin.index.json").string()
             : directory_or_index;
  const std::string directory = is_dir ? directory_or_index : index_directory(directory_or_index);
  auto parsed = read_checkpoint_index(index_path, std::uint64_t{256} << 20);
  if (!parsed) {
    return std::move(parsed).err().with_path(index_path);
  }
  shard_index out;
  for (const auto& [tensor, shard] : parsed->weight_map) {
    auto path = confined_shard_path(directory, shard);
    if (!path) {
      return std::move(path).err().with_path(index_path);
    }
    out.weight_map.emplace_back(tensor, *path);
    out.shard_paths.push_back(*path);
  }
  std::sort(out.shard_paths.begin(), out.shard_paths.end());
  out.shard_paths.erase(std::unique(out.shard_paths.begin(), out.shard_paths.end()), out.shard_paths.end());
  return out;
}

}  // namespace safetensors::torch
