// SPDX-License-Identifier: Apache-2.0
// A URL scheme of the tests' own, `demo://host/p`, served from a local folder: a store provider
// registered at run time exactly as the remote library registers http and https (location.h),
// for tests of the location door without a server.
#pragma once

#include <filesystem>
#include <memory>
#include <mutex>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "safetensors/checkpoint_store.h"
#include "safetensors/location.h"

namespace st_test {

/// `demo://host/p` read as the local file `root/p`: a provider of the caller's, which records
/// the options it was given.
class demo_store final : public safetensors::checkpoint_store {
 public:
  explicit demo_store(std::filesystem::path root) : root_(std::move(root)) {}
  safetensors::result<safetensors::checkpoint_target> resolve(const std::string& url) const override {
    return local().resolve(local_path(url));
  }
  safetensors::result<safetensors::checkpoint_index> read_index(const std::string& path,
                                                                std::uint64_t max_bytes) const override {
    return local().read_index(path, max_bytes);
  }
  safetensors::result<std::string> shard_path(const std::string& directory, std::string_view name) const override {
    return local().shard_path(directory, name);
  }
  std::vector<safetensors::result<safetensors::file>> open_files(
      std::span<const std::string> urls, const safetensors::open_options& options) const override {
    std::vector<std::string> paths;
    for (const auto& u : urls) paths.push_back(u.starts_with("demo://") ? local_path(u) : u);
    return local().open_files(paths, options);
  }
  safetensors::result<safetensors::sequential_file> open_sequential(const std::string& url) const override {
    return local().open_sequential(local_path(url));
  }

 private:
  static const safetensors::checkpoint_store& local() { return safetensors::local_checkpoint_store(); }
  std::string local_path(const std::string& url) const {
    return (root_ / url.substr(url.find('/', std::string("demo://").size()) + 1)).string();
  }
  std::filesystem::path root_;
};

class demo_provider final : public safetensors::store_provider {
 public:
  explicit demo_provider(std::filesystem::path root) : root_(std::move(root)) {}
  safetensors::result<std::shared_ptr<const safetensors::checkpoint_store>> store(
      const safetensors::url_options& options) const override {
    std::lock_guard lock(mutex);
    given.push_back(options);
    if (options.ca_file == "refuse")
      return safetensors::make_error(safetensors::error_code::unsupported, "the demo provider refuses");
    return std::shared_ptr<const safetensors::checkpoint_store>(std::make_shared<const demo_store>(root_));
  }
  mutable std::mutex mutex;
  mutable std::vector<safetensors::url_options> given;

 private:
  std::filesystem::path root_;
};

}  // namespace st_test
