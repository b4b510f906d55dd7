// SPDX-License-Identifier: Apache-2.0
// The checkpoint store of the local filesystem: what checkpoint::open and verify_checkpoint use.

#include <algorithm>
#include <memory>

#include "checkpoint/assemble.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/range_reader.h"
#include "safetensors/readonly_file.h"

namespace safetensors::detail {
namespace {

/// A local file as a range reader (verify's digests); readonly_file reads through the sys
/// seam, so the fault-injection tests reach it.
class local_file_reader final : public range_reader {
 public:
  explicit local_file_reader(readonly_file file) noexcept : file_(std::move(file)) {}

  const std::string& name() const noexcept override { return file_.path(); }
  std::uint64_t size() const noexcept override { return file_.size(); }
  status read(std::uint64_t offset, std::span<std::byte> destination) const override {
    return file_.read_at(offset, destination);
  }

 private:
  readonly_file file_;
};

class filesystem_store final : public checkpoint_store {
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
    auto file = readonly_file::open(path);
    if (!file) return std::move(file).err();
    return sequential_file{std::make_shared<const local_file_reader>(std::move(file).value()), std::size_t{4} << 20};
  }
};

}  // namespace
}  // namespace safetensors::detail

namespace safetensors {

const checkpoint_store& local_checkpoint_store() {
  static const detail::filesystem_store store;
  return store;
}

}  // namespace safetensors
