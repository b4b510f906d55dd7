// SPDX-License-Identifier: Apache-2.0
// A SafeTensors file, or a sharded SafeTensors checkpoint, as a tensor_source: read in
// bounded chunks, whatever the backend.
#include <algorithm>

#include "safetensors/checkpoint.h"
#include "safetensors/pipeline/selection.h"
#include "safetensors/pipeline/tensor_source.h"
#include "streaming_open.h"

namespace safetensors::pipeline {
namespace {

class safetensors_reader final : public tensor_source {
 public:
  explicit safetensors_reader(file f) : file_(std::move(f)) {
    format_ = "SafeTensors";
    format_id_ = "safetensors";
    path_ = file_.path();
    input_bytes_ = file_.file_size();
    for (const auto& t : file_.tensors()) {
      tensors_.push_back({std::string(t.name), t.type, std::vector<std::uint64_t>(t.shape.begin(), t.shape.end())});
    }
    metadata_ = file_.header().metadata();
  }

  status read(std::size_t index, const chunk_sink& consume) const override {
    return read_tensor_chunks(file_, file_.tensors()[index], buffer_, consume);
  }

 private:
  file file_;
  mutable std::vector<std::byte> buffer_;
};

// Every shard's tensors in shard order; `__metadata__` is what the shards share (shards of
// one checkpoint normally carry the same).
class checkpoint_reader final : public tensor_source {
 public:
  checkpoint_reader(checkpoint c, const warning_handler& on_warning) : checkpoint_(std::move(c)) {
    format_ = "SafeTensors (sharded)";
    format_id_ = "sharded";
    path_ = checkpoint_.index_path();
    for (const auto& shard : checkpoint_.shards()) {
      std::uint64_t shard_total = 0;
      for (const auto& t : shard.file.tensors()) {
        tensors_.push_back({std::string(t.name), t.type, std::vector<std::uint64_t>(t.shape.begin(), t.shape.end())});
        origins_.push_back({&shard.file, &t});
        shard_total += t.byte_size();
      }
      shard_bytes_ = std::max(shard_bytes_, shard_total);
      input_bytes_ += shard.file.file_size();
    }
    shard_bytes_ = std::max<std::uint64_t>(shard_bytes_, 1);
    std::vector<std::optional<metadata_map>> all;
    for (const auto& shard : checkpoint_.shards()) all.push_back(shard.file.header().metadata());
    metadata_ = common_metadata(all, on_warning);
  }

  status read(std::size_t index, const chunk_sink& consume) const override {
    return read_tensor_chunks(*origins_[index].first, *origins_[index].second, buffer_, consume);
  }

 private:
  checkpoint checkpoint_;
  std::vector<std::pair<const file*, const tensor_info*>> origins_;
  mutable std::vector<std::byte> buffer_;
};

}  // namespace

result<source_ptr> open_checkpoint_source(const std::string& path, const warning_handler& on_warning) {
  auto c = open_streaming_checkpoint(path);
  if (!c) return std::move(c).err();
  // What opening tolerated (a wrong total_size in the index).
  if (on_warning) {
    for (const auto& w : c->warnings()) on_warning(w);
  }
  if (!c->sharded()) return open_safetensors_source(c->shards().front().file.path());
  return source_ptr(std::make_unique<checkpoint_reader>(std::move(c).value(), on_warning));
}

source_ptr checkpoint_source(checkpoint c, const warning_handler& on_warning) {
  if (on_warning) {
    for (const auto& w : c.warnings()) on_warning(w);
  }
  return source_ptr(std::make_unique<checkpoint_reader>(std::move(c), on_warning));
}

source_ptr safetensors_source(file f) { return std::make_unique<safetensors_reader>(std::move(f)); }

result<source_ptr> open_safetensors_source(const std::string& path) {
  auto f = open_streaming_file(path);
  if (!f) return std::move(f).err();
  return safetensors_source(std::move(f).value());
}

}  // namespace safetensors::pipeline
