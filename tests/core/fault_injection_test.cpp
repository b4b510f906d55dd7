// SPDX-License-Identifier: Apache-2.0
// Injected system-call faults (EINTR, EIO, ENOSPC, short transfers, mapping, fsync and
// rename failures) on the read and write paths: each gives a clean error with the right
// code, errno, path and message; EINTR and short transfers are absorbed; the atomic
// writer leaves the old target or the new one and never a stray temporary.
#include <gtest/gtest.h>

#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <thread>
#include <utility>
#include <vector>

#include "platform/sys.h"
#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/fault_injector.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using namespace safetensors;
using st_test::fault;
using st_test::fault_injector;
using st_test::sys_call;

/// Three tensors of distinct bytes; `seed` changes the contents (old vs new file).
struct sample {
  std::vector<std::vector<std::byte>> buffers;
  std::vector<tensor_data> tensors;

  explicit sample(int seed) {
    const std::pair<dtype, std::vector<std::uint64_t>> shapes[] = {
        {dtype::F32, {64, 64}}, {dtype::BF16, {3, 5}}, {dtype::U8, {7}}};
    int i = 0;
    for (const auto& [type, shape] : shapes) {
      auto bytes = byte_size(type, shape).bytes;
      std::vector<std::byte> b(bytes);
      for (std::size_t k = 0; k < b.size(); ++k)
        b[k] = static_cast<std::byte>((k * 7 + static_cast<std::size_t>(seed + i)) & 0xff);
      buffers.push_back(std::move(b));
      ++i;
    }
    const char* names[] = {"weight", "bias", "index"};
    for (std::size_t k = 0; k < 3; ++k) tensors.push_back({names[k], shapes[k].first, shapes[k].second, buffers[k]});
  }
  [[nodiscard]] std::vector<std::byte> bytes() const { return serialize(tensors).value(); }
};

class FaultInjection : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = st_test::scratch_dir();
    target_ = (dir_ / "model.safetensors").string();
  }

  /// Writes the "old" file without faults.
  void write_old() { ASSERT_OK(write_file(target_, old_.tensors)); }

  /// After a reported write failure: the target is exactly the old file (or absent if
  /// there was none) and the directory holds nothing else.
  void expect_untouched(bool had_old) {
    if (had_old) {
      EXPECT_EQ(st_test::read_bytes(target_), old_.bytes());
      EXPECT_EQ(st_test::list_dir(dir_), std::vector<std::string>{"model.safetensors"});
    } else {
      EXPECT_TRUE(st_test::list_dir(dir_).empty()) << "stray file: " << st_test::list_dir(dir_).front();
    }
  }

  static void expect_io(const error& e, int err, const std::string& path, const char* words) {
    EXPECT_EQ(e.code, error_code::io) << e.to_string();
    EXPECT_EQ(e.os_errno, err) << e.to_string();
    EXPECT_EQ(e.path, path);
    EXPECT_NE(e.message.find(words), std::string::npos) << e.message;
    EXPECT_NE(e.message.find(std::strerror(err)), std::string::npos) << e.message;
  }

  std::filesystem::path dir_;
  std::string target_;
  sample old_{1};
  sample new_{2};
};

// ---- retried and absorbed -------------------------------------------------------------

TEST_F(FaultInjection, EintrIsRetriedEverywhere) {
  write_old();
  for (auto backend : {io_backend::mmap, io_backend::pread}) {
    fault_injector inject({{sys_call::open, EINTR, 0, 1, 2}, {sys_call::pread, EINTR, 0, 1, 3}});
    auto f = file::open(target_, {backend, {}});
    ASSERT_OK(f);
    auto w = f->load("weight");
    ASSERT_OK(w);
    EXPECT_EQ(*w, old_.buffers[0]);
    EXPECT_GE(inject.injected(), 2U) << backend_name(backend);
  }
  {
    fault_injector inject({{sys_call::open, EINTR, 0, 1, 1},
                           {sys_call::pwrite, EINTR, 0, 1, 5},
                           {sys_call::fsync, EINTR, 0, 1, 2},
                           {sys_call::close, EINTR, 0, 1, 1}});
    auto s = write_file(target_, new_.tensors);
    ASSERT_OK(s);
    EXPECT_GE(inject.injected(), 9U);
  }
  EXPECT_EQ(st_test::read_bytes(target_), new_.bytes());
  EXPECT_EQ(st_test::list_dir(dir_), std::vector<std::string>{"model.safetensors"});
}

TEST_F(FaultInjection, ShortReadsAndWritesAreCompleted) {
  {
    fault_injector inject({{sys_call::pwrite, 0, 5, 1, UINT64_MAX}});
    ASSERT_OK(write_file(target_, old_.tensors));
    EXPECT_GT(inject.calls(sys_call::pwrite), old_.bytes().size() / 5);
  }
  EXPECT_EQ(st_test::read_bytes(target_), old_.bytes());
  fault_injector inject({{sys_call::pread, 0, 3, 1, UINT64_MAX}});
  auto f = file::open(target_, {io_backend::pread, {}});
  ASSERT_OK(f);
  for (std::size_t i = 0; i < 3; ++i) {
    auto t = f->load(old_.tensors[i].name);
    ASSERT_OK(t);
    EXPECT_EQ(*t, old_.buffers[i]);
  }
}

// ---- readers --------------------------------------------------------------------------

TEST_F(FaultInjection, ReadErrorsAreCleanIoErrors) {
  write_old();
  {
    fault_injector inject({{sys_call::open, EACCES}});
    auto f = file::open(target_);
    ASSERT_FALSE(f.ok());
    expect_io(f.err(), EACCES, target_, "cannot open file");
  }
  {
    fault_injector inject({{sys_call::fstat, EIO}});
    auto f = file::open(target_);
    ASSERT_FALSE(f.ok());
    expect_io(f.err(), EIO, target_, "cannot get file attributes");
  }
  {
    fault_injector inject({{sys_call::mmap, ENOMEM}});
    auto f = file::open(target_, {io_backend::mmap, {}});
    ASSERT_FALSE(f.ok());
    expect_io(f.err(), ENOMEM, target_, "cannot map file");
  }
  {
    fault_injector inject({{sys_call::pread, EIO, 0, 1}});  // the first bytes: the header's start with them
    auto f = file::open(target_, {io_backend::pread, {}});
    ASSERT_FALSE(f.ok());
    expect_io(f.err(), EIO, target_, "read failed at byte 0");
    EXPECT_EQ(f.err().offset, 0U);
  }
  auto f = file::open(target_, {io_backend::pread, {}});
  ASSERT_OK(f);
  fault_injector inject({{sys_call::pread, EIO}});
  std::vector<std::byte> out(old_.buffers[1].size());
  auto s = f->read_into("bias", out);
  ASSERT_FALSE(s.ok());
  expect_io(s.err(), EIO, target_, "read failed");
  EXPECT_EQ(s.err().tensor, "bias");
  EXPECT_EQ(s.err().offset, f->header().data_start() + f->find("bias")->begin);
}

TEST_F(FaultInjection, StreamReadsRetryEintrAndReportEio) {
  // A FIFO cannot be mapped: the mmap backend reads it whole with read(2).
  const std::string fifo = (dir_ / "pipe.safetensors").string();
  const auto bytes = old_.bytes();
  struct sigaction ignore {
  }, previous{};
  ignore.sa_handler = SIG_IGN;
  ASSERT_EQ(::sigaction(SIGPIPE, &ignore, &previous), 0);  // the reader may leave early
  for (int err : {EINTR, EIO}) {
    SCOPED_TRACE(std::strerror(err));
    ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
    std::thread writer([&] {
      FILE* out = std::fopen(fifo.c_str(), "wb");
      if (out == nullptr) return;
      (void)std::fwrite(bytes.data(), 1, bytes.size(), out);
      std::fclose(out);
    });
    {
      fault_injector inject({{sys_call::read, err, 0, 2, 2}});
      auto f = file::open(fifo);
      if (err == EINTR) {
        ASSERT_OK(f);
        auto w = f->load("weight");
        ASSERT_OK(w);
        EXPECT_EQ(*w, old_.buffers[0]);
      } else {
        ASSERT_FALSE(f.ok());
        expect_io(f.err(), EIO, fifo, "read failed");
      }
    }
    writer.join();
    std::filesystem::remove(fifo);
  }
  ::sigaction(SIGPIPE, &previous, nullptr);
}

TEST_F(FaultInjection, EveryFailingCallOnOpenIsCleanAndLeaksNothing) {
  write_old();
  for (auto backend : {io_backend::mmap, io_backend::pread}) {
    for (std::uint64_t k = 1;; ++k) {
      SCOPED_TRACE(std::string(backend_name(backend)) + ": failing call " + std::to_string(k));
      const std::size_t fds = st_test::open_fd_count();
      bool done = false;
      {
        fault_injector inject;
        inject.fail_nth_call(k, EIO, {sys_call::close, sys_call::munmap});
        auto f = file::open(target_, {backend, {}});
        if (f.ok()) {
          auto w = f->load("weight");  // pread backend: the read may be the failing call
          if (w.ok()) {
            EXPECT_EQ(*w, old_.buffers[0]);
          } else {
            expect_io(w.err(), EIO, target_, "read failed");
          }
        } else {
          expect_io(f.err(), EIO, target_, "");
        }
        done = inject.total_calls() < k;  // nothing left to fail
      }
      EXPECT_EQ(st_test::open_fd_count(), fds);
      if (done) break;
    }
  }
}

// ---- the atomic writer ----------------------------------------------------------------

TEST_F(FaultInjection, EnospcWhileWritingLeavesOldFileAndNoTemporary) {
  for (bool had_old : {false, true}) {
    if (had_old) write_old();
    fault_injector inject({{sys_call::pwrite, ENOSPC, 0, 2}});
    auto s = write_file(target_, new_.tensors);
    ASSERT_FALSE(s.ok());
    expect_io(s.err(), ENOSPC, target_, "write failed at byte");
    expect_untouched(had_old);
  }
}

TEST_F(FaultInjection, FailuresToCreateSizeFlushCloseOrRenameLeaveOldFile) {
  write_old();
  const struct {
    fault f;
    const char* words;
  } cases[] = {
      {{sys_call::open, EMFILE}, "cannot create a temporary file"},
      {{sys_call::ftruncate, ENOSPC}, "cannot size the temporary file"},
      {{sys_call::fsync, EIO}, "cannot flush the file to disk"},
      {{sys_call::close, EIO}, "cannot close the temporary file"},
      {{sys_call::rename, EXDEV}, "cannot rename the temporary file"},
  };
  for (const auto& c : cases) {
    SCOPED_TRACE(st_test::sys_call_name(c.f.call));
    fault_injector inject({c.f});
    auto s = write_file(target_, new_.tensors);
    ASSERT_FALSE(s.ok());
    expect_io(s.err(), c.f.err, target_, c.words);
    expect_untouched(true);
  }
}

TEST_F(FaultInjection, StreamWriterFailureMidwayPoisonsTheWriter) {
  write_old();
  std::vector<tensor_spec> specs;
  for (const auto& t : new_.tensors) specs.push_back({t.name, t.type, t.shape});
  auto plan = write_plan::make(specs);
  ASSERT_OK(plan);
  auto w = stream_writer::create(target_, std::move(plan).value());
  ASSERT_OK(w);
  {
    fault_injector inject({{sys_call::pwrite, EIO}});
    auto s = w->append("weight", std::span(new_.buffers[0]).first(100));
    ASSERT_FALSE(s.ok());
    expect_io(s.err(), EIO, target_, "write failed");
    EXPECT_EQ(s.err().tensor, "weight");
  }
  // The failure aborted the write: later calls fail too and nothing reaches the target.
  EXPECT_FALSE(w->append("bias", new_.buffers[1]).ok());
  EXPECT_FALSE(w->commit().ok());
  expect_untouched(true);
}

TEST_F(FaultInjection, EveryFailingCallOnWriteLeavesOldOrNewFile) {
  write_old();
  const auto old_bytes = old_.bytes();
  const auto new_bytes = new_.bytes();
  for (std::uint64_t k = 1;; ++k) {
    SCOPED_TRACE("failing call " + std::to_string(k));
    const std::size_t fds = st_test::open_fd_count();
    fault_injector inject;
    // A failing unlink during cleanup would leave the temporary by definition; a close
    // failure on a cleanup path is ignored. Everything else is fair game.
    inject.fail_nth_call(k, EIO, {sys_call::unlink});
    auto s = write_file(target_, (k % 2 != 0 ? new_ : old_).tensors);
    const auto now = st_test::read_bytes(target_);
    EXPECT_TRUE(now == old_bytes || now == new_bytes);
    if (!s.ok()) {
      expect_io(s.err(), EIO, target_, "");
      EXPECT_EQ(st_test::open_fd_count(), fds);
    }
    EXPECT_EQ(st_test::list_dir(dir_), std::vector<std::string>{"model.safetensors"});
    if (inject.total_calls() < k) {
      EXPECT_OK(s);
      break;
    }
  }
}

// ---- write-back started while writing ---------------------------------------------------

std::vector<std::pair<off_t, off_t>> writeback_ranges;
int record_writeback(int fd, off_t offset, off_t n, unsigned flags) {
  writeback_ranges.emplace_back(offset, n);
  return safetensors::detail::sys::real().sync_file_range(fd, offset, n, flags);
}

/// Streams one U8 tensor of `size` bytes to `target` in `chunk`-byte appends.
status stream_bytes(const std::string& target, std::uint64_t size, std::uint64_t chunk) {
  auto plan = write_plan::make({{"w", dtype::U8, {size}}});
  if (!plan) return std::move(plan).err();
  auto w = stream_writer::create(target, std::move(plan).value());
  if (!w) return std::move(w).err();
  std::vector<std::byte> bytes(chunk);
  for (std::uint64_t done = 0; done < size; done += chunk) {
    const auto n = std::min(chunk, size - done);
    for (std::uint64_t k = 0; k < n; ++k) bytes[k] = static_cast<std::byte>(((done + k) * 13) & 0xff);
    if (auto s = w->append("w", std::span(bytes).first(n)); !s) return s;
  }
  return w->commit();
}

void expect_streamed_bytes(const std::string& target, std::uint64_t size) {
  auto f = file::open(target);
  ASSERT_OK(f);
  auto w = f->load("w");
  ASSERT_OK(w);
  ASSERT_EQ(w->size(), size);
  for (std::uint64_t k = 0; k < size; k += 4099) ASSERT_EQ((*w)[k], static_cast<std::byte>((k * 13) & 0xff)) << k;
}

TEST_F(FaultInjection, WriteBackStartsAsEachEightMiBIsWrittenSoFsyncFindsLittleLeft) {
  constexpr std::uint64_t mib = std::uint64_t{1} << 20;
  safetensors::detail::sys::table recording = safetensors::detail::sys::real();
  recording.sync_file_range = record_writeback;
  writeback_ranges.clear();
  {
    const safetensors::detail::sys::scoped_override use(recording);
    ASSERT_OK(stream_bytes(target_, 20 * mib, 3 * mib));
  }
  expect_streamed_bytes(target_, 20 * mib);
  // Two 8 MiB boundaries passed: write-back of everything below the second was started, in
  // order, each range where the previous one ended.
  ASSERT_EQ(writeback_ranges.size(), 2U);
  EXPECT_EQ(writeback_ranges[0].first, 0);
  EXPECT_GE(writeback_ranges[0].second, static_cast<off_t>(8 * mib));
  EXPECT_EQ(writeback_ranges[1].first, static_cast<off_t>(8 * mib));
  EXPECT_GE(writeback_ranges[0].first + writeback_ranges[0].second, static_cast<off_t>(8 * mib));
  EXPECT_GE(writeback_ranges[1].first + writeback_ranges[1].second, static_cast<off_t>(16 * mib));
  // A small file never asks: the fsync at commit writes it.
  writeback_ranges.clear();
  {
    const safetensors::detail::sys::scoped_override use(recording);
    ASSERT_OK(write_file(target_, new_.tensors));
  }
  EXPECT_TRUE(writeback_ranges.empty());
}

TEST_F(FaultInjection, AFailingWriteBackRequestIsHarmless) {
  constexpr std::uint64_t mib = std::uint64_t{1} << 20;
  fault_injector inject({{sys_call::sync_file_range, EIO, 0, 1, 100}});
  ASSERT_OK(stream_bytes(target_, 17 * mib, 4 * mib));
  EXPECT_EQ(inject.calls(sys_call::sync_file_range), 2U);
  EXPECT_EQ(inject.injected(), 2U);
  expect_streamed_bytes(target_, 17 * mib);
  EXPECT_EQ(st_test::list_dir(dir_), std::vector<std::string>{"model.safetensors"});
}

}  // namespace
