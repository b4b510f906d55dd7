// SPDX-License-Identifier: Apache-2.0
// checkpoint::open and verify_checkpoint over a store of the caller's (checkpoint_store.h): an
// in-memory store serves an index and two shards, and records which operations were used, so
// these tests fail if opening falls back to the filesystem or skips the store's own checks.
#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_store.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/hasher.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
namespace st = safetensors;

class memory_reader final : public st::range_reader {
 public:
  memory_reader(std::string name, const std::vector<std::byte>& bytes) : name_(std::move(name)), bytes_(bytes) {}
  const std::string& name() const noexcept override { return name_; }
  std::uint64_t size() const noexcept override { return bytes_.size(); }
  st::status read(std::uint64_t offset, std::span<std::byte> destination) const override {
    if (offset > bytes_.size() || destination.size() > bytes_.size() - offset) {
      return st::make_error(error_code::io, "read past the end");
    }
    std::copy_n(bytes_.begin() + static_cast<std::ptrdiff_t>(offset), destination.size(), destination.begin());
    return {};
  }

 private:
  std::string name_;
  const std::vector<std::byte>& bytes_;
};

/// Files under "mem:/", keyed by their full name.
class memory_store final : public st::checkpoint_store {
 public:
  std::map<std::string, std::vector<std::byte>> files;
  mutable std::vector<std::string> calls;

  st::result<st::checkpoint_target> resolve(const std::string& path) const override {
    log("resolve " + path);
    st::checkpoint_target t;
    t.directory = "mem:";
    (path.ends_with(".json") ? t.index_path : t.single_file) = path;
    return t;
  }
  st::result<st::checkpoint_index> read_index(const std::string& path, std::uint64_t) const override {
    log("read_index " + path);
    auto it = files.find(path);
    if (it == files.end()) return st::make_error(error_code::io, "no such file");
    return st::parse_checkpoint_index(it->second);
  }
  st::result<std::string> shard_path(const std::string& directory, std::string_view name) const override {
    log(fmt::format("shard_path {}", name));
    if (name.find('/') != std::string_view::npos) return st::make_error(error_code::unsafe_path, "a slash");
    return fmt::format("{}/{}", directory, name);
  }
  std::vector<st::result<st::file>> open_files(std::span<const std::string> paths,
                                               const st::open_options& options) const override {
    std::vector<st::result<st::file>> out;
    for (const std::string& p : paths) {
      log("open " + p);
      auto it = files.find(p);
      if (it == files.end()) {
        out.emplace_back(st::make_error(error_code::io, "no such file"));
      } else {
        out.push_back(st::file::open_reader(std::make_shared<memory_reader>(p, it->second), options));
      }
    }
    return out;
  }
  st::result<st::sequential_file> open_sequential(const std::string& path) const override {
    log("sequential " + path);
    return st::sequential_file{std::make_shared<memory_reader>(path, files.at(path)), 7};
  }

 private:
  void log(std::string call) const {
    std::lock_guard lock(mutex_);
    calls.push_back(std::move(call));
  }
  mutable std::mutex mutex_;
};

std::vector<std::byte> shard_bytes(const std::string& name, std::byte fill) {
  const std::vector<std::byte> data(12, fill);
  const st::tensor_data t{name, st::dtype::F32, {3}, data};
  auto bytes = st::serialize(std::span(&t, 1));
  EXPECT_OK(bytes);
  return std::move(bytes).value();
}

std::vector<std::byte> text_bytes(std::string_view text) {
  const auto* p = reinterpret_cast<const std::byte*>(text.data());
  return {p, p + text.size()};
}

/// Shards a (tensor x) and b (tensor y) and their index.
void add_two_shards(memory_store& store) {
  store.files["mem:/a.safetensors"] = shard_bytes("x", std::byte{1});
  store.files["mem:/b.safetensors"] = shard_bytes("y", std::byte{2});
  store.files["mem:/model.safetensors.index.json"] =
      text_bytes(R"({"weight_map": {"x": "a.safetensors", "y": "b.safetensors"}})");
}

TEST(CheckpointStore, OpensAnIndexAndItsShardsFromTheStore) {
  memory_store store;
  add_two_shards(store);
  auto c = st::checkpoint::open("mem:/model.safetensors.index.json", {}, store);
  ASSERT_OK(c);
  ASSERT_EQ(c->tensors().size(), 2u);
  EXPECT_EQ(c->tensors()[0].name, "x");
  EXPECT_EQ(c->tensors()[1].name, "y");
  EXPECT_EQ(c->shards().size(), 2u);
  EXPECT_EQ(c->index_path(), "mem:/model.safetensors.index.json");
  const std::vector<std::string> expected{"resolve mem:/model.safetensors.index.json",
                                          "read_index mem:/model.safetensors.index.json",
                                          "shard_path a.safetensors",
                                          "shard_path b.safetensors",
                                          "open mem:/a.safetensors",
                                          "open mem:/b.safetensors"};
  EXPECT_EQ(store.calls, expected);
}

TEST(CheckpointStore, TheStoresRefusalOfAShardNameFailsTheOpenAtTheIndex) {
  memory_store store;
  add_two_shards(store);
  store.files["mem:/model.safetensors.index.json"] = text_bytes(R"({"weight_map": {"x": "sub/a.safetensors"}})");
  auto c = st::checkpoint::open("mem:/model.safetensors.index.json", {}, store);
  EXPECT_ERROR_SAYING(c, error_code::unsafe_path, "a slash");
  EXPECT_EQ(c.err().path, "mem:/model.safetensors.index.json");
}

TEST(CheckpointStore, VerifyHashesEveryShardThroughTheStoresSequentialReader) {
  memory_store store;
  add_two_shards(store);
  st::verify_options options;
  // Counts the bytes hashed; the store's 7-byte pieces must reach the hasher.
  class byte_counter final : public st::hasher {
   public:
    void update(std::span<const std::byte> bytes) noexcept override { n_ += bytes.size(); }
    std::string finish_hex() override { return fmt::format("{}", std::exchange(n_, 0)); }

   private:
    std::size_t n_ = 0;
  };
  options.digest = []() -> st::result<std::unique_ptr<st::hasher>> {
    return std::unique_ptr<st::hasher>(std::make_unique<byte_counter>());
  };
  auto report = st::verify_checkpoint("mem:/model.safetensors.index.json", options, store);
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok());
  ASSERT_EQ(report->shards.size(), 2u);
  for (const auto& shard : report->shards) {
    EXPECT_EQ(shard.digest, fmt::format("{}", store.files.at("mem:/" + shard.name).size())) << shard.name;
  }
  EXPECT_NE(std::find(store.calls.begin(), store.calls.end(), "sequential mem:/b.safetensors"), store.calls.end());
}

TEST(CheckpointStore, TheLocalStoreReadsTheFilesystem) {
  const auto path = st_test::scratch_dir() / "one.safetensors";
  st_test::write_bytes(path, shard_bytes("z", std::byte{3}));
  auto c = st::checkpoint::open(path.string(), {}, st::local_checkpoint_store());
  ASSERT_OK(c);
  ASSERT_EQ(c->tensors().size(), 1u);
  EXPECT_EQ(c->tensors()[0].name, "z");
  EXPECT_ERROR(
      st::checkpoint::open((path.parent_path() / "missing.safetensors").string(), {}, st::local_checkpoint_store()),
      error_code::io);
}

}  // namespace
