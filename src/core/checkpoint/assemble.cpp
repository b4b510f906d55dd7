// SPDX-License-Identifier: Apache-2.0
// Resolving checkpoint paths and cross-checking an index against its shards.
#include "checkpoint/assemble.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>
#include "safetensors/checkpoint_verify.h"

namespace safetensors::detail {
namespace {

bool ends_with(std::string_view s, std::string_view suffix) {
  return s.size() >= suffix.size() && s.substr(s.size() - suffix.size()) == suffix;
}

error located(error e, std::string path) {
  e.path = std::move(path);
  return e;
}

}  // namespace

result<checkpoint_target> resolve_checkpoint_path(const std::string& path) {
  namespace fs = std::filesystem;
  std::error_code ec;
  checkpoint_target t;
  if (!fs::is_directory(path, ec)) {
    t.directory = parent_directory(path);
    (ends_with(path, ".json") ? t.index_path : t.single_file) = path;
    return t;
  }
  t.directory = path;
  while (t.directory.size() > 1 && t.directory.back() == '/') t.directory.pop_back();
  std::vector<std::string> indexes;
  std::vector<std::string> files;
  for (fs::directory_iterator it(path, ec), end; !ec && it != end; it.increment(ec)) {
    const std::string name = it->path().filename().string();
    if (ends_with(name, ".safetensors.index.json")) indexes.push_back(name);
    if (ends_with(name, ".safetensors")) files.push_back(name);
  }
  if (ec) {
    error e = make_error(error_code::io, fmt::format("cannot list directory: {}", ec.message()));
    e.os_errno = ec.value();
    return located(std::move(e), path);
  }
  std::sort(indexes.begin(), indexes.end());
  std::sort(files.begin(), files.end());
  if (indexes.size() == 1) {
    t.index_path = t.directory + "/" + indexes[0];
    return t;
  }
  if (indexes.size() > 1) {
    return located(
        make_error(error_code::invalid_argument, fmt::format("the directory holds {} index files ({}); name one",
                                                             indexes.size(), fmt::join(indexes, ", "))),
        path);
  }
  if (files.size() == 1) {
    t.single_file = t.directory + "/" + files[0];
    return t;
  }
  return located(make_error(error_code::invalid_argument,
                            files.empty() ? std::string("the directory holds no .safetensors file")
                                          : fmt::format("the directory holds {} .safetensors files and no index; "
                                                        "name one",
                                                        files.size())),
                 path);
}

std::vector<std::string> shard_names(const checkpoint_index& index) {
  std::vector<std::string> names;
  names.reserve(index.weight_map.size());
  for (const auto& entry : index.weight_map) names.push_back(entry.second);
  std::sort(names.begin(), names.end());
  names.erase(std::unique(names.begin(), names.end()), names.end());
  return names;
}

void cross_check(const checkpoint_index& index, const std::vector<std::string>& names,
                 const std::vector<const file*>& files, const std::string& directory, const issue_sink& sink) {
  auto shard_of = [&](const std::string& name) {
    return static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), name) - names.begin());
  };
  auto shard_path = [&](std::size_t i) { return directory + "/" + names[i]; };
  auto emit = [&](checkpoint_problem kind, std::size_t shard, std::string message, std::string_view tensor) {
    error e = make_error(error_code::shard_mismatch, std::move(message), std::nullopt, std::string(tensor));
    e.path = shard_path(shard);
    return sink(kind, std::move(e));
  };
  // Every tensor the shards hold: (name, shard), sorted by name.
  std::vector<std::pair<std::string_view, std::size_t>> stored;
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (files[i] == nullptr) continue;
    for (const tensor_info& t : files[i]->tensors()) stored.emplace_back(t.name, i);
  }
  std::sort(stored.begin(), stored.end());
  auto holders = [&](std::string_view name) {
    auto lo = std::lower_bound(stored.begin(), stored.end(), std::pair{name, std::size_t{0}});
    auto hi = lo;
    while (hi != stored.end() && hi->first == name) ++hi;
    return std::pair{lo, hi};
  };

  for (const auto& [tensor, shard_name] : index.weight_map) {
    const std::size_t s = shard_of(shard_name);
    if (files[s] == nullptr || files[s]->find(tensor) != nullptr) continue;
    if (!emit(checkpoint_problem::tensor_missing_from_shard, s,
              fmt::format("tensor '{}' is mapped to shard '{}', which does not contain it", tensor, shard_name),
              tensor)) {
      return;
    }
  }
  for (auto it = stored.begin(); it != stored.end();) {
    auto [lo, hi] = holders(it->first);
    const std::string_view name = it->first;
    if (hi - lo > 1) {
      std::vector<std::string_view> where;
      for (auto h = lo; h != hi; ++h) where.push_back(names[h->second]);
      if (!emit(checkpoint_problem::tensor_in_several_shards, std::next(lo)->second,
                fmt::format("tensor '{}' is stored in {} shards: {}", name, hi - lo, fmt::join(where, ", ")), name)) {
        return;
      }
    }
    auto mapped = std::lower_bound(index.weight_map.begin(), index.weight_map.end(), name,
                                   [](const auto& entry, std::string_view n) { return entry.first < n; });
    const bool in_map = mapped != index.weight_map.end() && mapped->first == name;
    for (auto h = lo; h != hi; ++h) {
      if (in_map && mapped->second == names[h->second]) continue;
      std::string message = in_map ? fmt::format("shard '{}' stores tensor '{}', which the weight_map assigns to '{}'",
                                                 names[h->second], name, mapped->second)
                                   : fmt::format("shard '{}' stores tensor '{}', which the weight_map does not list",
                                                 names[h->second], name);
      if (in_map && hi - lo > 1) continue;  // already reported as stored twice
      if (!emit(checkpoint_problem::tensor_not_in_weight_map, h->second, std::move(message), name)) return;
    }
    it = hi;
  }
  if (!index.total_size) return;
  for (const file* f : files) {
    if (f == nullptr) return;  // sizes of unreadable shards are unknown
  }
  std::uint64_t sum = 0;
  for (const auto& [tensor, shard_name] : index.weight_map) {
    if (const tensor_info* t = files[shard_of(shard_name)]->find(tensor)) sum += t->byte_size();
  }
  if (sum != *index.total_size) {
    error e = make_error(
        error_code::shard_mismatch,
        fmt::format("metadata.total_size is {}, the tensors of the weight_map hold {} bytes", *index.total_size, sum));
    (void)sink(checkpoint_problem::total_size_mismatch, std::move(e));
  }
}

}  // namespace safetensors::detail
