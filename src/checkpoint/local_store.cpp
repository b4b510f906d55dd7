// SPDX-License-Identifier: Apache-2.0
// The checkpoint store of the local filesystem: what checkpoint::open and verify_checkpoint use.
#include <fcntl.h>

#include <algorithm>

#include "checkpoint/assemble.h"
#include "platform/sys.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/sha256.h"

namespace safetensors::detail {
namespace {

class local_checkpoint_store final : public checkpoint_store {
 public:
  result<checkpoint_target> resolve(const std::string& path) const override { return resolve_checkpoint_path(path); }

  result<checkpoint_index> read_index(const std::string& path, std::uint64_t max_bytes) const override {
    return read_checkpoint_index(path, max_bytes);
  }

  result<std::string> shard_path(const std::string& directory, std::string_view name) const override {
    return confined_shard_path(directory, name);
  }

  std::vector<result<file>> open_files(std::span<const std::string> paths, const open_options& options) const override {
    std::vector<result<file>> out;
    out.reserve(paths.size());
    for (const std::string& p : paths) out.push_back(file::open(p, options));
    return out;
  }

  /// Read in 4 MiB pieces through the sys seam.
  result<std::string> sha256(const std::string& path, const hash_progress& on_hashed) const override {
    auto fd = sys::open_file(path, O_RDONLY);
    if (!fd) return std::move(fd).err();
    sys::unique_fd guard(*fd);
    auto size = sys::file_size(*fd, path);
    if (!size) return std::move(size).err();
    auto hasher = sha256_hasher::create();
    if (!hasher) return std::move(hasher).err();
    std::vector<std::byte> buffer(std::size_t{4} << 20);
    for (std::uint64_t at = 0; at < *size;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), *size - at));
      if (auto s = sys::pread_exact(*fd, buffer.data(), n, at, path); !s) return std::move(s).err();
      hasher->update(std::span<const std::byte>(buffer.data(), n));
      at += n;
      if (on_hashed) on_hashed(path, at, *size);
    }
    return to_hex(hasher->finish());
  }
};

}  // namespace

const checkpoint_store& local_store() {
  static const local_checkpoint_store store;
  return store;
}

}  // namespace safetensors::detail
