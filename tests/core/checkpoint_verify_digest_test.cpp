// SPDX-License-Identifier: Apache-2.0
// verify_checkpoint hashes shard files with the caller's hasher (hasher.h): the core computes
// no hash itself. A counting hasher here proves every byte of every shard reaches it in order,
// with progress; a failing factory is a shard problem, not a failed verify. (SHA-256, from
// component sha256: sha256_test.cpp.)
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include <fmt/format.h>

#include "safetensors/checkpoint_verify.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/hasher.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using safetensors::error_code;

/// "<bytes>:<position-weighted sum>": changes when a byte is missing, repeated or out of order.
class counting_hasher final : public safetensors::hasher {
 public:
  void update(std::span<const std::byte> bytes) noexcept override {
    for (std::byte b : bytes) sum_ += ++count_ * std::to_integer<std::uint64_t>(b);
  }
  std::string finish_hex() override {
    std::string out = fmt::format("{:x}:{:x}", count_, sum_);
    count_ = sum_ = 0;
    return out;
  }

 private:
  std::uint64_t count_ = 0;
  std::uint64_t sum_ = 0;
};

std::string counted(const fs::path& p) {
  counting_hasher h;
  const auto bytes = st_test::read_bytes(p);
  h.update(bytes);
  return h.finish_hex();
}

/// Three shards of U8 tensors t0..t4 (100 bytes each).
fs::path write_sharded() {
  const auto dir = st_test::scratch_dir();
  std::vector<std::vector<std::byte>> storage;
  std::vector<safetensors::tensor_data> tensors;
  for (std::size_t i = 0; i < 5; ++i) storage.emplace_back(100, static_cast<std::byte>(i + 1));
  for (std::size_t i = 0; i < 5; ++i) {
    tensors.push_back({fmt::format("t{}", i), safetensors::dtype::U8, {100}, storage[i]});
  }
  safetensors::shard_write_options o;
  o.max_shard_bytes = 250;
  EXPECT_OK(safetensors::write_checkpoint(dir.string(), tensors, o));
  return dir;
}

TEST(VerifyDigest, EveryShardIsHashedWholeByTheCallersHasher) {
  const fs::path dir = write_sharded();
  safetensors::verify_options options;
  int made = 0;
  options.digest = [&]() -> safetensors::result<std::unique_ptr<safetensors::hasher>> {
    ++made;
    return std::unique_ptr<safetensors::hasher>(std::make_unique<counting_hasher>());
  };
  std::map<std::string, std::pair<std::uint64_t, std::uint64_t>> progress;  // path -> (done, size)
  options.on_hashed = [&](const std::string& path, std::uint64_t done, std::uint64_t size) {
    EXPECT_GT(done, progress[path].first) << path;
    progress[path] = {done, size};
  };
  auto report = safetensors::verify_checkpoint(dir.string(), options);
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok());
  ASSERT_EQ(report->shards.size(), 3U);
  EXPECT_EQ(made, 3);
  for (const auto& shard : report->shards) {
    EXPECT_EQ(shard.digest, counted(shard.path)) << shard.name;
    const auto size = static_cast<std::uint64_t>(fs::file_size(shard.path));
    EXPECT_EQ(progress[shard.path], std::make_pair(size, size)) << shard.name;
  }
}

TEST(VerifyDigest, NoHasherNoDigest) {
  const fs::path dir = write_sharded();
  auto report = safetensors::verify_checkpoint(dir.string());
  ASSERT_OK(report);
  for (const auto& shard : report->shards) EXPECT_TRUE(shard.digest.empty()) << shard.name;
}

TEST(VerifyDigest, AHasherThatCannotBeMadeIsAShardProblem) {
  const fs::path dir = write_sharded();
  safetensors::verify_options options;
  options.digest = []() -> safetensors::result<std::unique_ptr<safetensors::hasher>> {
    return safetensors::make_error(error_code::invalid_argument, "no such hash here");
  };
  auto report = safetensors::verify_checkpoint(dir.string(), options);
  ASSERT_OK(report);
  EXPECT_FALSE(report->ok());
  ASSERT_EQ(report->issues.size(), 3U);
  for (const auto& issue : report->issues) {
    EXPECT_EQ(issue.kind, safetensors::checkpoint_problem::shard_invalid);
    EXPECT_EQ(issue.error.message, "no such hash here");
  }
  for (const auto& shard : report->shards) {
    EXPECT_FALSE(shard.ok) << shard.name;
    EXPECT_TRUE(shard.digest.empty()) << shard.name;
  }
}

}  // namespace
