// SPDX-License-Identifier: Apache-2.0
// The atomic writer's direct path (src/core/writer/direct_writes.h): a file of 64 MiB or more
// written front to back goes to the device around the page cache, and every way out of that
// path (writes out of order, a file system that refuses direct I/O, EINVAL or a short count
// from a direct write) still gives the exact bytes; a failing direct write is a clean error
// that names its byte and leaves nothing behind.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
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

constexpr std::uint64_t one_mib = std::uint64_t{1} << 20;
// Two tensors just over the 64 MiB threshold together: eight 8 MiB buffers and a tail of a few
// bytes (the header's ~80 bytes come first).
constexpr std::uint64_t tensor_bytes = 32 * one_mib + 5;

/// Tensor `t`'s bytes: 8-byte words that differ from every other word of both tensors. Made
/// for each test (the fixture's), not kept: 64 MiB held for the process would count in the RSS
/// of children that other tests fork to measure their peak.
std::vector<std::byte> expected(std::uint64_t t) {
  std::vector<std::uint64_t> words(tensor_bytes / 8 + 1);
  for (std::size_t k = 0; k < words.size(); ++k) words[k] = (k + (t << 40)) * 0x9e3779b97f4a7c15ULL;
  std::vector<std::byte> bytes(tensor_bytes);
  std::memcpy(bytes.data(), words.data(), bytes.size());
  return bytes;
}

/// Tensors "a" and "b", appended in `chunk`-byte pieces: all of "a" then all of "b" (in file
/// order), or "b" first (out of order).
using two_tensors = std::array<std::vector<std::byte>, 2>;

status stream_two(const two_tensors& tensors, const std::string& target, std::uint64_t chunk, bool b_first) {
  auto plan = write_plan::make({{"a", dtype::U8, {tensor_bytes}}, {"b", dtype::U8, {tensor_bytes}}});
  if (!plan) return std::move(plan).err();
  auto w = stream_writer::create(target, std::move(plan).value());
  if (!w) return std::move(w).err();
  for (std::uint64_t t : b_first ? std::vector<std::uint64_t>{1, 0} : std::vector<std::uint64_t>{0, 1}) {
    const std::span<const std::byte> bytes(tensors[t]);
    for (std::uint64_t done = 0; done < tensor_bytes; done += chunk) {
      if (auto s = w->append(t == 0 ? "a" : "b", bytes.subspan(done, std::min(chunk, tensor_bytes - done))); !s)
        return s;
    }
  }
  return w->commit();
}

void expect_exact(const two_tensors& tensors, const std::string& target) {
  auto f = file::open(target, {io_backend::pread, {}});
  ASSERT_OK(f);
  for (std::uint64_t t : {0U, 1U}) {
    auto bytes = f->load(t == 0 ? "a" : "b");
    ASSERT_OK(bytes);
    ASSERT_EQ(bytes->size(), tensor_bytes);
    EXPECT_TRUE(std::memcmp(bytes->data(), tensors[t].data(), tensor_bytes) == 0) << "tensor " << t << " differs";
  }
}

/// Bytes of `path` in the page cache (mincore over a mapping that is never touched).
std::uint64_t resident_bytes(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  const auto size = static_cast<std::size_t>(::lseek(fd, 0, SEEK_END));
  void* map = ::mmap(nullptr, size, PROT_READ, MAP_SHARED, fd, 0);
  ::close(fd);
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  std::vector<unsigned char> in_core((size + page - 1) / page);
  EXPECT_EQ(::mincore(map, size, in_core.data()), 0) << std::strerror(errno);
  ::munmap(map, size);
  std::uint64_t resident = 0;
  for (unsigned char c : in_core) resident += (c & 1U) * page;
  return resident;
}

/// Whether the file system under `dir` takes an aligned O_DIRECT write (tmpfs and some FUSE
/// file systems do not: there the writer's ordinary path is all there is to test).
bool direct_io_works(const std::filesystem::path& dir) {
  const auto probe = (dir / "probe").string();
  const int fd = ::open(probe.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
  void* block = std::aligned_alloc(4096, 4096);
  std::memset(block, 0, 4096);
  const bool works =
      safetensors::detail::sys::real().set_direct_io(fd, true) == 0 && ::pwrite(fd, block, 4096, 0) == 4096;
  std::free(block);
  ::close(fd);
  std::filesystem::remove(probe);
  return works;
}

class DirectWrites : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = st_test::scratch_dir();
    target_ = (dir_ / "model.safetensors").string();
  }
  std::filesystem::path dir_;
  std::string target_;
  const two_tensors tensors_{expected(0), expected(1)};
};

TEST_F(DirectWrites, ALargeFileWrittenInOrderBypassesThePageCache) {
  if (!direct_io_works(dir_)) GTEST_SKIP() << "the file system under " << dir_ << " refuses O_DIRECT";
  {
    fault_injector count;
    // Pieces of 3 MiB + 1: the writer's buffer realigns them.
    ASSERT_OK(stream_two(tensors_, target_, 3 * one_mib + 1, false));
    EXPECT_EQ(count.calls(sys_call::set_direct_io), 2U);    // on at creation, off for the tail
    EXPECT_EQ(count.calls(sys_call::sync_file_range), 0U);  // nothing to start write-back of
    EXPECT_EQ(count.calls(sys_call::pwrite), 9U);           // 8 whole 8 MiB buffers, the tail
  }
  // Through the page cache the whole 64 MiB would be cached now; here only the tail's page.
  EXPECT_LE(resident_bytes(target_), 64U * 1024) << "written through the page cache";
  expect_exact(tensors_, target_);
  EXPECT_EQ(st_test::list_dir(dir_), std::vector<std::string>{"model.safetensors"});
}

TEST_F(DirectWrites, WritesOutOfOrderContinueThroughThePageCache) {
  fault_injector count;
  ASSERT_OK(stream_two(tensors_, target_, 5 * one_mib, true));  // "b" first: its first write is out of sequence
  // The header was gathered; the first write of "b" ends the direct path at once.
  EXPECT_LE(count.calls(sys_call::set_direct_io), 2U);
  EXPECT_GE(count.calls(sys_call::sync_file_range), 1U);
  expect_exact(tensors_, target_);
}

TEST_F(DirectWrites, AFileSystemThatRefusesDirectIoGetsOrdinaryWrites) {
  fault_injector inject({{sys_call::set_direct_io, EINVAL, 0, 1, 1}});
  ASSERT_OK(stream_two(tensors_, target_, 4 * one_mib, false));
  EXPECT_EQ(inject.calls(sys_call::set_direct_io), 1U);
  EXPECT_GE(inject.calls(sys_call::sync_file_range), 7U);  // write-back started every 8 MiB
  expect_exact(tensors_, target_);
}

TEST_F(DirectWrites, EinvalOrAShortCountFromADirectWriteFallsBackToOrdinaryWrites) {
  if (!direct_io_works(dir_)) GTEST_SKIP() << "the file system under " << dir_ << " refuses O_DIRECT";
  // The second buffer's write: refused (EINVAL), or cut short after 1 MiB + 7 bytes.
  for (const fault& f : {fault{sys_call::pwrite, EINVAL, 0, 2, 1}, fault{sys_call::pwrite, 0, one_mib + 7, 2, 1}}) {
    SCOPED_TRACE(f.err != 0 ? "EINVAL" : "short write");
    fault_injector inject({f});
    ASSERT_OK(stream_two(tensors_, target_, 2 * one_mib, false));
    EXPECT_EQ(inject.injected(), 1U);
    EXPECT_GE(inject.calls(sys_call::sync_file_range), 1U);  // the rest through the page cache
    expect_exact(tensors_, target_);
    EXPECT_EQ(st_test::list_dir(dir_), std::vector<std::string>{"model.safetensors"});
  }
}

TEST_F(DirectWrites, AFailingDirectWriteIsACleanErrorAtItsByte) {
  if (!direct_io_works(dir_)) GTEST_SKIP() << "the file system under " << dir_ << " refuses O_DIRECT";
  const auto old_bytes = std::vector<std::byte>{std::byte{1}, std::byte{2}};
  {
    std::FILE* old = std::fopen(target_.c_str(), "wb");
    std::fwrite(old_bytes.data(), 1, old_bytes.size(), old);
    std::fclose(old);
  }
  fault_injector inject({{sys_call::pwrite, ENOSPC, 0, 3, 1}});
  auto s = stream_two(tensors_, target_, 8 * one_mib, false);
  ASSERT_FALSE(s.ok());
  EXPECT_EQ(s.err().code, error_code::io) << s.err().to_string();
  EXPECT_EQ(s.err().os_errno, ENOSPC);
  EXPECT_EQ(s.err().offset, 16 * one_mib);
  EXPECT_EQ(s.err().path, target_);
  EXPECT_NE(s.err().message.find("write failed at byte 16777216"), std::string::npos) << s.err().message;
  EXPECT_EQ(st_test::read_bytes(target_), old_bytes);
  EXPECT_EQ(st_test::list_dir(dir_), std::vector<std::string>{"model.safetensors"});
}

TEST_F(DirectWrites, ASmallFileIsWrittenThroughThePageCache) {
  fault_injector count;
  const std::vector<std::byte> bytes(one_mib, std::byte{9});
  const tensor_data t{"w", dtype::U8, {bytes.size()}, bytes};
  ASSERT_OK(write_file(target_, std::span(&t, 1)));
  EXPECT_EQ(count.calls(sys_call::set_direct_io), 0U);
}

}  // namespace
