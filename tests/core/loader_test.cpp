// SPDX-License-Identifier: Apache-2.0
// The parallel loader: whole checkpoints and slices on both backends and thread counts,
// progress and cancellation, and a file truncated during a pread load.
#include <gtest/gtest.h>

#include <cerrno>
#include <filesystem>

#include <fmt/format.h>

#include "safetensors/checkpoint_write.h"
#include "safetensors/loader.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using safetensors::dtype;
using safetensors::error_code;

/// Tensors of distinct sizes and patterned bytes, written as a sharded checkpoint.
struct fixture {
  fs::path dir = st_test::scratch_dir();
  std::vector<std::vector<std::byte>> storage;
  std::vector<safetensors::tensor_data> tensors;

  fixture() {
    const std::uint64_t sizes[] = {300'000, 70'000, 1, 0, 200'003, 131'072};
    for (std::size_t i = 0; i < std::size(sizes); ++i) {
      std::vector<std::byte> b(sizes[i]);
      for (std::size_t k = 0; k < b.size(); ++k) b[k] = static_cast<std::byte>((k * 31 + i * 7) % 256);
      storage.push_back(std::move(b));
    }
    for (std::size_t i = 0; i < storage.size(); ++i) {
      tensors.push_back({fmt::format("w{}", i), dtype::U8, {storage[i].size()}, storage[i]});
    }
    safetensors::shard_write_options o;
    o.max_shard_bytes = 400'000;
    EXPECT_OK(safetensors::write_checkpoint(dir.string(), tensors, o));
  }
};

TEST(Loader, WholeCheckpointOnEveryBackendAndThreadCount) {
  fixture fx;
  for (auto backend : {safetensors::io_backend::mmap, safetensors::io_backend::pread}) {
    safetensors::checkpoint_options co;
    co.shard.backend = backend;
    auto c = safetensors::checkpoint::open(fx.dir.string(), co);
    ASSERT_OK(c) << c.err().to_string();
    ASSERT_GT(c->shards().size(), 1U);
    for (unsigned threads : {1U, 2U, 5U}) {
      SCOPED_TRACE(fmt::format("{} threads, {}", threads, safetensors::backend_name(backend)));
      safetensors::load_options o;
      o.threads = threads;
      o.chunk_bytes = 1;  // raised to the 64 KiB floor: many pieces per tensor
      std::uint64_t last = 0;
      std::uint64_t total = 0;
      o.progress = [&](const safetensors::load_progress& p) {
        EXPECT_GE(p.bytes_done, last);
        last = p.bytes_done;
        total = p.bytes_total;
        return true;
      };
      auto loaded = safetensors::load_checkpoint(*c, {}, o);
      ASSERT_OK(loaded) << loaded.err().to_string();
      ASSERT_EQ(loaded->size(), fx.storage.size());
      for (std::size_t i = 0; i < fx.storage.size(); ++i) {
        EXPECT_EQ((*loaded)[i].name, fmt::format("w{}", i));
        EXPECT_TRUE(std::equal((*loaded)[i].bytes().begin(), (*loaded)[i].bytes().end(), fx.storage[i].begin(),
                               fx.storage[i].end()));
      }
      EXPECT_EQ(total, 701'076U);
      EXPECT_EQ(last, total);
    }
    const std::string some[] = {"w4", "w1"};
    auto two = safetensors::load_checkpoint(*c, some);
    ASSERT_OK(two);
    EXPECT_EQ((*two)[0].name, "w1");
    const std::string missing[] = {"nope"};
    EXPECT_ERROR(safetensors::load_checkpoint(*c, missing), error_code::tensor_not_found);
  }
}

TEST(Loader, SlicePlansAndCallerMemory) {
  fixture fx;
  safetensors::checkpoint_options co;
  co.shard.backend = safetensors::io_backend::pread;
  auto c = safetensors::checkpoint::open(fx.dir.string(), co);
  ASSERT_OK(c);
  const auto* w0 = c->find("w0");
  const auto& f = c->file_of(*w0);
  auto plan = safetensors::plan_slice(f, "w0", safetensors::parse_slice_spec("1000:250000:3").value());
  ASSERT_OK(plan);
  std::vector<std::byte> sliced(plan->byte_size);
  std::vector<std::byte> whole(fx.storage[4].size());
  const safetensors::load_request requests[] = {{&f, w0->info, &*plan, sliced},
                                                {&c->file_of(*c->find("w4")), c->find("w4")->info, nullptr, whole}};
  safetensors::load_options o;
  o.threads = 3;
  ASSERT_OK(safetensors::load(requests, o));
  EXPECT_EQ(whole, fx.storage[4]);
  ASSERT_EQ(sliced.size(), 83'000U);
  for (std::size_t k = 0; k < sliced.size(); ++k) ASSERT_EQ(sliced[k], fx.storage[0][1000 + 3 * k]) << k;

  std::vector<std::byte> wrong(5);
  const safetensors::load_request bad[] = {{&f, w0->info, nullptr, wrong}};
  EXPECT_ERROR(safetensors::load(bad), error_code::invalid_argument);
}

TEST(Loader, ProgressCanCancel) {
  fixture fx;
  auto c = safetensors::checkpoint::open(fx.dir.string());
  ASSERT_OK(c);
  safetensors::load_options o;
  o.threads = 2;
  o.chunk_bytes = 1;
  o.progress = [](const safetensors::load_progress&) { return false; };
  auto r = safetensors::load_checkpoint(*c, {}, o);
  ASSERT_ERROR(r, error_code::io);
  EXPECT_EQ(r.err().os_errno, ECANCELED);
}

TEST(Loader, FileTruncatedDuringPreadLoadIsACleanError) {
  const auto dir = st_test::scratch_dir();
  std::vector<std::byte> big(std::size_t{4} << 20, std::byte{0x5A});
  const std::vector<safetensors::tensor_data> t{{"big", dtype::U8, {big.size()}, big}};
  const auto path = (dir / "big.safetensors").string();
  ASSERT_OK(safetensors::write_file(path, t));
  safetensors::checkpoint_options co;
  co.shard.backend = safetensors::io_backend::pread;
  auto c = safetensors::checkpoint::open(path, co);
  ASSERT_OK(c);
  safetensors::load_options o;
  o.threads = 1;
  o.chunk_bytes = 1;
  int calls = 0;
  o.progress = [&](const safetensors::load_progress&) {
    if (++calls == 1) fs::resize_file(path, 4096);  // another process truncates it
    return true;
  };
  auto r = safetensors::load_checkpoint(*c, {}, o);
  ASSERT_ERROR(r, error_code::io);
  EXPECT_EQ(r.err().path, path);
  EXPECT_EQ(r.err().tensor, "big");
  EXPECT_EQ(calls, 1);
}

}  // namespace
