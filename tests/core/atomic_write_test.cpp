// SPDX-License-Identifier: Apache-2.0
// Atomic and streaming writes: the target only ever holds a complete file, a failed or
// abandoned write leaves the old file and no temporary, and streaming memory is bounded.
#include <gtest/gtest.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::dtype;

std::size_t entries_in(const std::filesystem::path& dir) {
  return static_cast<std::size_t>(std::distance(std::filesystem::directory_iterator(dir), {}));
}

safetensors::write_plan plan_of(std::vector<safetensors::tensor_spec> specs) {
  auto plan = safetensors::write_plan::make(std::move(specs));
  EXPECT_OK(plan);
  return std::move(plan).value();
}

std::vector<std::byte> old_file_bytes() {
  const std::uint8_t v[4] = {1, 2, 3, 4};
  safetensors::tensor_data t{"old", dtype::U8, {4}, std::as_bytes(std::span(v))};
  return *safetensors::serialize(std::span(&t, 1));
}

TEST(AtomicWrite, ReplacesTheTargetOnCommit) {
  const auto dir = st_test::scratch_dir();
  const auto target = dir / "model.safetensors";
  st_test::write_bytes(target, old_file_bytes());
  const float v[2] = {1.5F, -2.0F};
  safetensors::tensor_data t{"new", dtype::F32, {2}, std::as_bytes(std::span(v))};
  ASSERT_OK(safetensors::write_file(target.string(), std::span(&t, 1)));
  auto f = safetensors::file::open(target.string());
  ASSERT_OK(f);
  EXPECT_NE(f->find("new"), nullptr);
  EXPECT_EQ(entries_in(dir), 1U) << "no temporary may remain";
}

TEST(AtomicWrite, AbandonedStreamLeavesOldFileAndNoTemporary) {
  const auto dir = st_test::scratch_dir();
  const auto target = dir / "model.safetensors";
  const auto old_bytes = old_file_bytes();
  st_test::write_bytes(target, old_bytes);
  {
    auto w = safetensors::stream_writer::create(target.string(), plan_of({{"w", dtype::U8, {1024}}}));
    ASSERT_OK(w);
    std::vector<std::byte> half(512, std::byte{7});
    ASSERT_OK(w->append("w", half));
    EXPECT_EQ(entries_in(dir), 2U) << "the temporary lives beside the target while writing";
  }  // destroyed without commit
  EXPECT_EQ(st_test::read_bytes(target), old_bytes);
  EXPECT_EQ(entries_in(dir), 1U);
}

// A target whose name takes all of a file name's 255 bytes is written: its temporary's name
// (".NAME.tmp-PID-N") is cut short to fit, at a character's start.
TEST(AtomicWrite, TargetsWithTheLongestNamesAreWritten) {
  const auto dir = st_test::scratch_dir();
  const std::string suffix = ".safetensors";
  for (const std::string& fill : {std::string("m"), std::string("\xc3\xa9")}) {  // 1- and 2-byte characters
    std::string name;
    while (name.size() + fill.size() + suffix.size() <= 255) name += fill;
    name += suffix;
    ASSERT_GE(name.size(), 254U);
    const auto target = dir / name;
    auto w = safetensors::stream_writer::create(target.string(), plan_of({{"w", dtype::U8, {4}}}));
    ASSERT_OK(w) << name.size() << " bytes";
    for (const auto& e : std::filesystem::directory_iterator(dir)) {
      const std::string temporary = e.path().filename().string();
      EXPECT_LE(temporary.size(), 255U);
      EXPECT_EQ(temporary.rfind('.' + name.substr(0, 100), 0), 0U) << temporary;
      const auto at = temporary.find(".tmp-");
      ASSERT_NE(at, std::string::npos) << temporary;
      EXPECT_NE(temporary[at - 1], '\xc3') << "a character cut in two";
    }
    ASSERT_OK(w->append("w", std::vector<std::byte>(4, std::byte{1})));
    ASSERT_OK(w->commit());
    EXPECT_TRUE(std::filesystem::exists(target));
    EXPECT_EQ(entries_in(dir), 1U);
    std::filesystem::remove(target);
  }
}

// A path with a NUL byte names no file: every system call would stop at the NUL and write or
// read the file named by what precedes it ("model\0.tmp" is "model").
TEST(AtomicWrite, APathWithANulByteIsRefused) {
  const auto dir = st_test::scratch_dir();
  const auto victim = dir / "model.safetensors";
  st_test::write_bytes(victim, old_file_bytes());
  const std::string bad = victim.string() + std::string("\0.tmp", 5);
  const std::uint8_t v[1] = {9};
  const safetensors::tensor_data t{"new", dtype::U8, {1}, std::as_bytes(std::span(v))};
  auto written = safetensors::write_file(bad, std::span(&t, 1));
  ASSERT_ERROR(written, safetensors::error_code::invalid_argument);
  EXPECT_NE(written.err().message.find("NUL byte at byte " + std::to_string(victim.string().size())), std::string::npos)
      << written.err().message;
  for (auto backend : {safetensors::io_backend::mmap, safetensors::io_backend::pread}) {
    ASSERT_ERROR(safetensors::file::open(bad, {backend, {}}), safetensors::error_code::invalid_argument);
  }
  EXPECT_EQ(st_test::read_bytes(victim), old_file_bytes());
  EXPECT_EQ(entries_in(dir), 1U);
}

TEST(AtomicWrite, IncompleteCommitFailsAndCleansUp) {
  const auto dir = st_test::scratch_dir();
  const auto target = dir / "model.safetensors";
  const auto old_bytes = old_file_bytes();
  st_test::write_bytes(target, old_bytes);
  auto w = safetensors::stream_writer::create(target.string(), plan_of({{"a", dtype::U8, {8}}, {"b", dtype::U8, {8}}}));
  ASSERT_OK(w);
  std::vector<std::byte> eight(8);
  ASSERT_OK(w->append("a", eight));
  auto s = w->commit();
  ASSERT_ERROR(s, safetensors::error_code::invalid_argument);
  EXPECT_EQ(s.err().tensor.value_or(""), "b");
  EXPECT_EQ(st_test::read_bytes(target), old_bytes);
  EXPECT_EQ(entries_in(dir), 1U);
}

TEST(AtomicWrite, OverfullTensorAndUnknownNameAreErrors) {
  const auto dir = st_test::scratch_dir();
  auto w = safetensors::stream_writer::create((dir / "x.safetensors").string(), plan_of({{"a", dtype::U8, {4}}}));
  ASSERT_OK(w);
  std::vector<std::byte> five(5);
  auto unknown = w->append("nope", five);
  ASSERT_ERROR(unknown, safetensors::error_code::tensor_not_found);
  auto overfull = w->append("a", five);
  ASSERT_ERROR(overfull, safetensors::error_code::invalid_argument);
  EXPECT_EQ(entries_in(dir), 0U) << "a failed write removes its temporary";
}

TEST(AtomicWrite, MissingDirectoryIsAnIoErrorWithThePath) {
  const auto target = (st_test::scratch_dir() / "no" / "such" / "dir" / "m.safetensors").string();
  auto s = safetensors::write_file(target, {});
  ASSERT_ERROR(s, safetensors::error_code::io);
  EXPECT_EQ(s.err().path, target);
  EXPECT_NE(s.err().message.find("No such file"), std::string::npos) << s.err().message;
}

TEST(AtomicWrite, StreamsInAnyTensorOrderAndMatchesSerialize) {
  const auto dir = st_test::scratch_dir();
  std::vector<std::byte> a(3000);
  std::vector<std::byte> b(1000);
  for (std::size_t i = 0; i < a.size(); ++i) a[i] = static_cast<std::byte>(i % 251);
  for (std::size_t i = 0; i < b.size(); ++i) b[i] = static_cast<std::byte>(i % 13);
  auto w = safetensors::stream_writer::create((dir / "s.safetensors").string(),
                                              plan_of({{"a", dtype::F32, {750}}, {"b", dtype::U8, {1000}}}));
  ASSERT_OK(w);
  // b first, then a in uneven chunks.
  ASSERT_OK(w->append("b", b));
  for (std::size_t at = 0; at < a.size(); at += 777) {
    ASSERT_OK(w->append("a", std::span(a).subspan(at, std::min<std::size_t>(777, a.size() - at))));
  }
  ASSERT_OK(w->commit());
  std::vector<safetensors::tensor_data> same = {{"a", dtype::F32, {750}, a}, {"b", dtype::U8, {1000}, b}};
  EXPECT_EQ(st_test::read_bytes(dir / "s.safetensors"), *safetensors::serialize(same));
}

/// A 256 MiB file streamed in 1 MiB chunks from a child process: its peak RSS stays far
/// below the file size (the writer holds no data, only the plan).
TEST(AtomicWrite, StreamingMemoryIsBoundedByTheChunkNotTheFile) {
  const auto path = (st_test::scratch_dir() / "big.safetensors").string();
  constexpr std::uint64_t total = 256ULL << 20;
  constexpr std::size_t chunk = 1 << 20;
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    auto plan = safetensors::write_plan::make({{"a", dtype::U8, {total / 2}}, {"b", dtype::U8, {total / 2}}});
    if (!plan) ::_exit(3);
    auto w = safetensors::stream_writer::create(path, std::move(plan).value());
    if (!w) ::_exit(4);
    std::vector<std::byte> buffer(chunk, std::byte{1});
    for (const char* name : {"a", "b"}) {
      for (std::uint64_t done = 0; done < total / 2; done += chunk) {
        if (!w->append(name, buffer)) ::_exit(5);
      }
    }
    ::_exit(w->commit() ? 0 : 6);
  }
  // wait4: this child's own peak, not RUSAGE_CHILDREN's largest of every child the test
  // executable has waited for (other tests fork bigger ones when run in one process).
  int status = 0;
  struct rusage usage {};
  ASSERT_EQ(::wait4(child, &status, 0, &usage), child);
  ASSERT_TRUE(WIFEXITED(status));
  ASSERT_EQ(WEXITSTATUS(status), 0);
  const std::uint64_t peak_bytes = static_cast<std::uint64_t>(usage.ru_maxrss) * 1024;
  EXPECT_LT(peak_bytes, 64ULL << 20) << "peak RSS " << peak_bytes << " for a " << total << "-byte file";
  EXPECT_EQ(std::filesystem::file_size(path), total + 8 + safetensors::read_header(path)->header_length());
  std::filesystem::remove(path);
}

}  // namespace
