// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/convert_input.h"

#include <filesystem>

#include "safetensors/checkpoint.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/pipeline/output_check.h"
#include "streaming_open.h"

namespace safetensors::pipeline {
namespace {

namespace fs = std::filesystem;

bool is_pytorch_index(const std::string& path) {
  return path.ends_with(".bin.index.json") || path.ends_with(".pt.index.json");
}

safetensors::result<convert_input> pytorch_sharded(const std::string& path, const std::string& index_path) {
  auto index = safetensors::torch::read_shard_index(path);
  if (!index) return std::move(index).err().with_path(path);
  convert_input in{convert_input::kind::pytorch_sharded, path, std::move(index->shard_paths), {}};
  in.files.push_back(index_path);
  return in;
}

}  // namespace

safetensors::result<convert_input> resolve_convert_input(const std::string& text, const url_options& url) {
  auto where = location::resolve(text, url);
  if (!where) return std::move(where).err();
  if (!where->is_local()) return convert_input{convert_input::kind::url, text, {}, std::move(where).value()};
  const std::string& path = where->path();
  std::error_code ec;
  const bool directory = where->kind() == location_kind::directory;
  if (!directory && !path.ends_with(".index.json")) {
    return convert_input{convert_input::kind::file, path, {path}, {}};
  }
  if (directory) {
    const std::string torch_index = (fs::path(path) / "pytorch_model.bin.index.json").string();
    if (fs::exists(torch_index, ec)) return pytorch_sharded(path, torch_index);
  } else if (is_pytorch_index(path)) {
    return pytorch_sharded(path, path);
  }
  auto c = open_streaming_checkpoint(path);
  if (!c) return std::move(c).err();
  if (!c->sharded()) {
    std::string file = c->shards()[0].file.path();
    return convert_input{convert_input::kind::file, file, {file}, {}};
  }
  return convert_input{convert_input::kind::safetensors_sharded, path, input_files(*c), {}};
}

}  // namespace safetensors::pipeline
