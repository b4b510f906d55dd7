// SPDX-License-Identifier: Apache-2.0
// Many threads on one open file: views on the mmap and memory backends, read_into and
// load on the pread backend, and concurrent opens and atomic writes. Run under
// ThreadSanitizer by scripts/tsan.
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include <fmt/format.h>

#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/fault_injector.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using namespace safetensors;

constexpr int tensor_count = 48;
constexpr int thread_count = 8;

struct fixture_file {
  std::vector<std::vector<std::byte>> buffers;
  std::vector<tensor_data> tensors;
  std::string path;

  fixture_file() {
    for (int i = 0; i < tensor_count; ++i) {
      std::vector<std::byte> b(static_cast<std::size_t>(1000 + 37 * i));
      for (std::size_t k = 0; k < b.size(); ++k)
        b[k] = static_cast<std::byte>((k + static_cast<std::size_t>(i) * 13) & 0xff);
      buffers.push_back(std::move(b));
    }
    for (int i = 0; i < tensor_count; ++i) {
      tensors.push_back({fmt::format("t{}", i),
                         dtype::U8,
                         {buffers[static_cast<std::size_t>(i)].size()},
                         buffers[static_cast<std::size_t>(i)]});
    }
    path = (st_test::scratch_dir() / "shared.safetensors").string();
    EXPECT_OK(write_file(path, tensors));
  }
};

/// Runs `body(thread_index)` on `thread_count` threads started together; returns the
/// number of mismatches they reported.
template <class Body>
int run_threads(Body body) {
  std::atomic<int> failures{0};
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < thread_count; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      failures += body(t);
    });
  }
  go = true;
  for (auto& th : threads) th.join();
  return failures.load();
}

TEST(Concurrency, ManyThreadsViewOneMappedFile) {
  fixture_file fx;
  for (auto backend : {io_backend::mmap, io_backend::pread}) {
    SCOPED_TRACE(backend_name(backend));
    auto f = file::open(fx.path, {backend, {}});
    ASSERT_OK(f);
    const file& shared = *f;
    int failures = run_threads([&](int t) {
      int bad = 0;
      for (int round = 0; round < 20; ++round) {
        for (int k = 0; k < tensor_count; ++k) {
          const int i = (k * 7 + t + round) % tensor_count;  // a different order per thread
          const auto& expected = fx.buffers[static_cast<std::size_t>(i)];
          const std::string name = fmt::format("t{}", i);
          if (shared.resident()) {
            auto v = shared.view(name);
            bad += !v.ok() || !std::equal(v->data.begin(), v->data.end(), expected.begin(), expected.end());
          }
          std::vector<std::byte> out(expected.size());
          bad += !shared.read_into(name, out).ok() || out != expected;
          auto loaded = shared.load(name);
          bad += !loaded.ok() || *loaded != expected;
        }
      }
      return bad;
    });
    EXPECT_EQ(failures, 0);
  }
}

TEST(Concurrency, ConcurrentOpensAndFromBuffer) {
  fixture_file fx;
  const auto bytes = st_test::read_bytes(fx.path);
  int failures = run_threads([&](int t) {
    int bad = 0;
    for (int round = 0; round < 20; ++round) {
      auto f = (round + t) % 3 == 0
                   ? file::from_buffer(bytes)
                   : file::open(fx.path, {(round + t) % 3 == 1 ? io_backend::mmap : io_backend::pread, {}});
      if (!f.ok() || f->tensors().size() != static_cast<std::size_t>(tensor_count)) {
        ++bad;
        continue;
      }
      auto w = f->load("t5");
      bad += !w.ok() || *w != fx.buffers[5];
    }
    return bad;
  });
  EXPECT_EQ(failures, 0);
}

TEST(Concurrency, ConcurrentAtomicWritersToOneDirectory) {
  fixture_file fx;
  const auto dir = std::filesystem::path(fx.path).parent_path();
  const auto expected = st_test::read_bytes(fx.path);
  // Every thread writes its own target and all of them also replace one shared target:
  // temporary names never collide, and the shared target ends up one complete file.
  int failures = run_threads([&](int t) {
    int bad = 0;
    const std::string own = (dir / fmt::format("own{}.safetensors", t)).string();
    for (int round = 0; round < 5; ++round) {
      bad += !write_file(own, fx.tensors).ok();
      bad += !write_file((dir / "common.safetensors").string(), fx.tensors).ok();
    }
    return bad;
  });
  EXPECT_EQ(failures, 0);
  EXPECT_EQ(st_test::read_bytes(dir / "common.safetensors"), expected);
  for (int t = 0; t < thread_count; ++t) {
    EXPECT_EQ(st_test::read_bytes(dir / fmt::format("own{}.safetensors", t)), expected);
  }
  EXPECT_EQ(st_test::list_dir(dir).size(), static_cast<std::size_t>(thread_count + 2)) << "stray temporaries";
}

}  // namespace
