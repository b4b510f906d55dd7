// SPDX-License-Identifier: Apache-2.0
// verify_checkpoint: every problem of an index and its shards, plus optional digests.
#include <algorithm>
#include <memory>
#include <vector>

#include "checkpoint/assemble.h"
#include "safetensors/checkpoint_verify.h"

namespace safetensors {
namespace {

/// The digest of a whole file, hashed piece by piece as the store reads it. The hasher comes
/// from the caller (verify_options::digest), so the core links no hash library.
result<std::string> file_digest(const checkpoint_store& store, const std::string& path, const verify_options& options) {
  auto file = store.open_sequential(path);
  if (!file) return std::move(file).err();
  auto hasher = options.digest();
  if (!hasher) return std::move(hasher).err();
  if (*hasher == nullptr) return make_error(error_code::invalid_argument, "verify_options::digest made no hasher");
  const range_reader& reader = *file->reader;
  const std::uint64_t size = reader.size();
  std::vector<std::byte> buffer(std::max<std::size_t>(file->piece_bytes, 1));
  for (std::uint64_t at = 0; at < size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), size - at));
    if (auto s = reader.read(at, std::span(buffer.data(), n)); !s) return std::move(s).err();
    (*hasher)->update(std::span<const std::byte>(buffer.data(), n));
    at += n;
    if (options.on_hashed) options.on_hashed(reader.name(), at, size);
  }
  return (*hasher)->finish_hex();
}

void add_shard(verify_report& report, std::string name, const std::string& path, const result<file>& f,
               const verify_options& options, const checkpoint_store& store) {
  shard_report r;
  r.name = std::move(name);
  r.path = path;
  if (f) {
    r.ok = true;
    r.tensors = f->tensors().size();
    r.file_size = f->file_size();
  } else {
    report.issues.push_back({checkpoint_problem::shard_invalid, f.err()});
  }
  if (options.digest && f) {
    auto digest = file_digest(store, path, options);
    if (digest) {
      r.digest = std::move(digest).value();
    } else {
      r.ok = false;
      report.issues.push_back({checkpoint_problem::shard_invalid, std::move(digest).err()});
    }
  }
  report.shards.push_back(std::move(r));
}

}  // namespace

result<verify_report> verify_checkpoint(const std::string& path, const verify_options& options,
                                        const checkpoint_store& store) {
  auto target = store.resolve(path);
  if (!target) return std::move(target).err();
  verify_report report;
  if (!target->single_file.empty()) {
    auto opened = store.open_files(std::span(&target->single_file, 1), options.open.shard);
    const auto& f = opened.front();
    if (f) {
      report.tensors = f->tensors().size();
      report.data_size = f->header().data_size();
    }
    const auto slash = target->single_file.find_last_of('/');
    add_shard(report, slash == std::string::npos ? target->single_file : target->single_file.substr(slash + 1),
              target->single_file, f, options, store);
    return report;
  }
  report.index_path = target->index_path;
  auto index = store.read_index(target->index_path, options.open.max_index_bytes);
  if (!index) return std::move(index).err();
  const auto names = detail::shard_names(*index);
  // Shards with safe names are opened together (concurrently on a remote store).
  std::vector<result<std::string>> paths;
  std::vector<std::string> safe_paths;
  for (const std::string& name : names) {
    paths.push_back(store.shard_path(target->directory, name));
    if (paths.back()) safe_paths.push_back(paths.back().value());
  }
  auto safe_opened = store.open_files(safe_paths, options.open.shard);
  std::vector<result<file>> opened;
  opened.reserve(names.size());
  for (std::size_t i = 0, next = 0; i < names.size(); ++i) {
    if (!paths[i]) {
      error e = paths[i].err();
      e.path = target->index_path;
      opened.emplace_back(e);
      report.issues.push_back({checkpoint_problem::shard_invalid, std::move(e)});
      report.shards.push_back({names[i], {}, false, 0, 0, {}});
      continue;
    }
    opened.push_back(std::move(safe_opened[next++]));
    add_shard(report, names[i], paths[i].value(), opened.back(), options, store);
  }
  std::vector<const file*> files;
  for (const auto& f : opened) files.push_back(f ? &f.value() : nullptr);
  detail::cross_check(*index, names, files, target->directory, [&](checkpoint_problem kind, error e) {
    report.issues.push_back({kind, std::move(e).with_path(target->index_path)});
    return true;
  });
  report.tensors = index->weight_map.size();
  for (const auto& [tensor, shard_name] : index->weight_map) {
    const auto s = static_cast<std::size_t>(std::lower_bound(names.begin(), names.end(), shard_name) - names.begin());
    if (files[s] == nullptr) continue;
    if (const tensor_info* t = files[s]->find(tensor)) report.data_size += t->byte_size();
  }
  return report;
}

result<verify_report> verify_checkpoint(const std::string& path, const verify_options& options) {
  return verify_checkpoint(path, options, local_checkpoint_store());
}

}  // namespace safetensors
