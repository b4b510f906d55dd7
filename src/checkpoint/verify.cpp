// SPDX-License-Identifier: Apache-2.0
// verify_checkpoint: every problem of an index and its shards, plus optional SHA-256.
#include <fcntl.h>

#include <algorithm>
#include <memory>

#include "checkpoint/assemble.h"
#include "platform/sys.h"
#include "safetensors/sha256.h"

namespace safetensors {
namespace {

/// SHA-256 of a whole file, read in 4 MiB pieces through the sys seam.
result<std::string> sha256_file(const std::string& path, const hash_progress& on_hashed) {
  auto fd = detail::sys::open_file(path, O_RDONLY);
  if (!fd) return std::move(fd).err();
  detail::sys::unique_fd guard(*fd);
  auto size = detail::sys::file_size(*fd, path);
  if (!size) return std::move(size).err();
  auto hasher = sha256_hasher::create();
  if (!hasher) return std::move(hasher).err();
  std::vector<std::byte> buffer(std::size_t{4} << 20);
  for (std::uint64_t at = 0; at < *size;) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), *size - at));
    if (auto s = detail::sys::pread_exact(*fd, buffer.data(), n, at, path); !s) return std::move(s).err();
    hasher->update(std::span<const std::byte>(buffer.data(), n));
    at += n;
    if (on_hashed) on_hashed(path, at, *size);
  }
  return to_hex(hasher->finish());
}

void add_shard(verify_report& report, std::string name, const std::string& path, const result<file>& f,
               const verify_options& options) {
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
  if (options.checksums && f) {
    auto digest = sha256_file(path, options.on_hashed);
    if (digest) {
      r.sha256 = std::move(digest).value();
    } else {
      r.ok = false;
      report.issues.push_back({checkpoint_problem::shard_invalid, std::move(digest).err()});
    }
  }
  report.shards.push_back(std::move(r));
}

}  // namespace

result<verify_report> verify_checkpoint(const std::string& path, const verify_options& options) {
  auto target = detail::resolve_checkpoint_path(path);
  if (!target) return std::move(target).err();
  verify_report report;
  if (!target->single_file.empty()) {
    auto f = file::open(target->single_file, options.open.shard);
    if (f) {
      report.tensors = f->tensors().size();
      report.data_size = f->meta().data_size();
    }
    const auto slash = target->single_file.find_last_of('/');
    add_shard(report, slash == std::string::npos ? target->single_file : target->single_file.substr(slash + 1),
              target->single_file, f, options);
    return report;
  }
  report.index_path = target->index_path;
  auto index = detail::read_index(target->index_path, options.open.max_index_bytes);
  if (!index) return std::move(index).err();
  const auto names = detail::shard_names(*index);
  std::vector<result<file>> opened;
  opened.reserve(names.size());
  for (const std::string& name : names) {
    auto shard_path = detail::confined_shard_path(target->directory, name);
    if (!shard_path) {
      error e = std::move(shard_path).err();
      e.path = target->index_path;
      opened.emplace_back(e);
      report.issues.push_back({checkpoint_problem::shard_invalid, std::move(e)});
      report.shards.push_back({name, {}, false, 0, 0, {}});
      continue;
    }
    opened.push_back(file::open(*shard_path, options.open.shard));
    add_shard(report, name, *shard_path, opened.back(), options);
  }
  std::vector<const file*> files;
  for (const auto& f : opened) files.push_back(f ? &f.value() : nullptr);
  detail::cross_check(*index, names, files, target->directory, [&](checkpoint_problem kind, error e) {
    if (e.path.empty()) e.path = target->index_path;
    report.issues.push_back({kind, std::move(e)});
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

}  // namespace safetensors
