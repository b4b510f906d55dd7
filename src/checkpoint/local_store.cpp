// SPDX-License-Identifier: Apache-2.0
// The checkpoint store of the local filesystem: what checkpoint::open and verify_checkpoint use.
#include <fcntl.h>

#include <algorithm>
#include <memory>

#include "checkpoint/assemble.h"
#include "platform/sys.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/range_reader.h"

namespace safetensors::detail {
namespace {

/// A local file read through the sys seam (pread), so tests can inject faults.
class local_file_reader final : public range_reader {
 public:
  local_file_reader(std::string path, int fd) : path_(std::move(path)), fd_(fd) {}

  /// Errors: IoError from open or fstat.
  static result<std::shared_ptr<const range_reader>> open(const std::string& path) {
    auto fd = sys::open_file(path, O_RDONLY);
    if (!fd) return std::move(fd).err();
    auto reader = std::make_shared<local_file_reader>(path, *fd);  // owns the descriptor
    auto size = sys::file_size(*fd, path);
    if (!size) return std::move(size).err();
    reader->size_ = *size;
    return std::shared_ptr<const range_reader>(std::move(reader));
  }

  const std::string& name() const noexcept override { return path_; }
  std::uint64_t size() const noexcept override { return size_; }
  status read(std::uint64_t offset, std::span<std::byte> destination) const override {
    return sys::pread_exact(fd_.get(), destination.data(), destination.size(), offset, path_);
  }

 private:
  std::string path_;
  sys::unique_fd fd_;
  std::uint64_t size_ = 0;
};

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

  /// Read in 4 MiB pieces.
  result<sequential_file> open_sequential(const std::string& path) const override {
    auto reader = local_file_reader::open(path);
    if (!reader) return std::move(reader).err();
    return sequential_file{std::move(reader).value(), std::size_t{4} << 20};
  }
};

}  // namespace

const checkpoint_store& local_store() {
  static const local_checkpoint_store store;
  return store;
}

}  // namespace safetensors::detail
