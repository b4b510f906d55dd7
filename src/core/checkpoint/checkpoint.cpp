// SPDX-License-Identifier: Apache-2.0
// checkpoint::open: one namespace over a single file or an index and its shards.
#include <algorithm>

#include <fmt/format.h>

#include "checkpoint/assemble.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_verify.h"

namespace safetensors {

struct checkpoint_builder {
  static result<checkpoint> single(const checkpoint_target& target, const checkpoint_options& options,
                                   const checkpoint_store& store) {
    auto opened = store.open_files(std::span(&target.single_file, 1), options.shard);
    auto& f = opened.front();
    if (!f) return std::move(f).err();
    checkpoint c;
    c.directory_ = target.directory;
    const auto slash = target.single_file.find_last_of('/');
    c.shards_.push_back(
        {slash == std::string::npos ? target.single_file : target.single_file.substr(slash + 1), std::move(f).value()});
    for (const tensor_info& t : c.shards_[0].file.tensors()) {
      c.tensors_.push_back({t.name, 0, &t});
      c.data_size_ += t.byte_size();
    }
    std::sort(c.tensors_.begin(), c.tensors_.end(),
              [](const tensor_location& a, const tensor_location& b) { return a.name < b.name; });
    return c;
  }

  static result<checkpoint> indexed(const checkpoint_target& target, const checkpoint_options& options,
                                    const checkpoint_store& store) {
    auto index = store.read_index(target.index_path, options.max_index_bytes);
    if (!index) return std::move(index).err();
    const auto names = detail::shard_names(*index);
    checkpoint c;
    c.directory_ = target.directory;
    c.index_path_ = target.index_path;
    std::vector<std::string> paths;
    for (const std::string& name : names) {
      auto path = store.shard_path(target.directory, name);
      if (!path) {
        return std::move(path).err().with_path(target.index_path);
      }
      paths.push_back(std::move(path).value());
    }
    auto opened = store.open_files(paths, options.shard);
    for (std::size_t i = 0; i < names.size(); ++i) {
      if (!opened[i]) return std::move(opened[i]).err();
      c.shards_.push_back({names[i], std::move(opened[i]).value()});
    }
    std::vector<const file*> files;
    for (const auto& s : c.shards_) files.push_back(&s.file);
    std::optional<error> first;
    detail::cross_check(*index, names, files, target.directory, [&](checkpoint_problem kind, error e) {
      e = std::move(e).with_path(target.index_path);
      // A stale total_size does not make the namespace ambiguous: readers go on, verify fails.
      if (kind == checkpoint_problem::total_size_mismatch) {
        c.warnings_.push_back(e.to_string());
        return true;
      }
      first = std::move(e);
      return false;
    });
    if (first) return std::move(*first);
    c.tensors_.reserve(index->weight_map.size());
    for (const auto& [tensor, shard_name] : index->weight_map) {
      const auto s = static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), shard_name) - names.begin());
      const tensor_info* info = c.shards_[s].file.find(tensor);
      c.tensors_.push_back({info->name, s, info});  // cross_check guarantees presence
      c.data_size_ += info->byte_size();
    }
    c.index_metadata_ = std::move(index->metadata);
    c.total_size_ = index->total_size;
    return c;
  }
};

result<checkpoint> checkpoint::open(const std::string& path, const checkpoint_options& options,
                                    const checkpoint_store& store) {
  auto target = store.resolve(path);
  if (!target) return std::move(target).err();
  if (!target->single_file.empty()) return checkpoint_builder::single(*target, options, store);
  return checkpoint_builder::indexed(*target, options, store);
}

result<checkpoint> checkpoint::open(const std::string& path, const checkpoint_options& options) {
  return open(path, options, local_checkpoint_store());
}

const tensor_location* checkpoint::find(std::string_view name) const& noexcept {
  auto it = std::lower_bound(tensors_.begin(), tensors_.end(), name,
                             [](const tensor_location& t, std::string_view n) { return t.name < n; });
  return it != tensors_.end() && it->name == name ? &*it : nullptr;
}

status checkpoint::read_into(std::string_view name, std::span<std::byte> destination) const {
  const tensor_location* t = find(name);
  if (t == nullptr) {
    return make_error(error_code::tensor_not_found, fmt::format("tensor '{}' not found in the checkpoint", name),
                      std::nullopt, std::string(name))
        .with_path(sharded() ? index_path_ : shards_.front().file.path());
  }
  return file_of(*t).read_into(*t->info, destination);
}

}  // namespace safetensors
