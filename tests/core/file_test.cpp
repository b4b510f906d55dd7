// SPDX-License-Identifier: Apache-2.0
// The reader: backends agree, header-only opening reads 8 + N bytes, lookups and
// copies check their arguments, and errors say where.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <string>

#include "platform/sys.h"
#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::dtype;

std::string write_sample(const std::filesystem::path& dir) {
  static const float w[6] = {1, 2, 3, 4, 5, 6};
  static const std::uint16_t b[2] = {0x3F80, 0x4000};
  std::vector<safetensors::tensor_data> t = {{"w", dtype::F32, {2, 3}, std::as_bytes(std::span(w))},
                                             {"b", dtype::BF16, {2}, std::as_bytes(std::span(b))}};
  const auto path = (dir / "sample.safetensors").string();
  EXPECT_OK(safetensors::write_file(path, t));
  return path;
}

safetensors::result<safetensors::file> open_with(const std::string& path, safetensors::io_backend backend) {
  safetensors::open_options o;
  o.backend = backend;
  return safetensors::file::open(path, o);
}

TEST(File, MmapAndPreadGiveIdenticalTensorsOnEveryValidCorpusFile) {
  const auto dir = st_test::conformance_dir() / "format";
  int files = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".safetensors") continue;
    auto mapped = open_with(entry.path().string(), safetensors::io_backend::mmap);
    if (!mapped) continue;
    auto preaded = open_with(entry.path().string(), safetensors::io_backend::pread);
    ASSERT_OK(preaded) << entry.path();
    ASSERT_EQ(mapped->tensors().size(), preaded->tensors().size());
    for (const auto& info : mapped->tensors()) {
      auto view = mapped->view(info.name);
      ASSERT_OK(view);
      std::vector<std::byte> copy(info.byte_size());
      ASSERT_OK(preaded->read_into(info.name, copy));
      EXPECT_TRUE(std::equal(copy.begin(), copy.end(), view->data.begin(), view->data.end()))
          << entry.path() << " " << info.name;
    }
    ++files;
  }
  EXPECT_GE(files, 59);
}

std::atomic<std::uint64_t> pread_bytes{0};
ssize_t counting_pread(int fd, void* buf, std::size_t n, off_t offset) {
  ssize_t got = safetensors::detail::sys::real().pread(fd, buf, n, offset);
  if (got > 0) pread_bytes += static_cast<std::uint64_t>(got);
  return got;
}

TEST(File, HeaderOnlyOpeningReadsJustThePrefixAndTheHeader) {
  const auto path = (st_test::scratch_dir() / "header-only.safetensors").string();
  const std::vector<std::byte> data(4096, std::byte{7});  // tensor bytes well past the first 512
  const std::vector<safetensors::tensor_data> tensors = {{"t", dtype::U8, {data.size()}, data}};
  ASSERT_OK(safetensors::write_file(path, tensors));
  safetensors::detail::sys::table counting = safetensors::detail::sys::real();
  counting.pread = counting_pread;
  counting.mmap = [](void*, std::size_t, int, int, int, off_t) -> void* {
    ADD_FAILURE() << "header-only opening must not map the file";
    return reinterpret_cast<void*>(-1);
  };
  safetensors::detail::sys::scoped_override guard(counting);
  pread_bytes = 0;
  auto h = safetensors::read_header(path);
  ASSERT_OK(h);
  // The first 512 bytes (what a framing error is worded from) and the rest of the header.
  EXPECT_LT(h->data_start(), 512U);
  EXPECT_EQ(pread_bytes.load(), 512U);
}

TEST(File, LookupsAndCopiesCheckTheirArguments) {
  const auto path = write_sample(st_test::scratch_dir());
  auto f = safetensors::file::open(path);
  ASSERT_OK(f);
  auto missing = f->view("nope");
  ASSERT_ERROR(missing, safetensors::error_code::tensor_not_found);
  EXPECT_EQ(missing.err().path, path);
  std::vector<std::byte> small(3);
  auto wrong = f->read_into("w", small);
  ASSERT_ERROR(wrong, safetensors::error_code::invalid_argument);
  EXPECT_EQ(wrong.err().tensor.value_or(""), "w");
  std::vector<std::byte> past(16);
  EXPECT_FALSE(f->read_range(f->file_size() - 8, past).ok());

  auto p = open_with(path, safetensors::io_backend::pread);
  ASSERT_OK(p);
  EXPECT_FALSE(p->resident());
  auto no_view = p->view("w");
  ASSERT_ERROR(no_view, safetensors::error_code::invalid_argument);
  auto loaded = p->load("w");
  ASSERT_OK(loaded);
  EXPECT_EQ(loaded->size(), 24U);
}

// Large reads go through a bounce buffer and non-temporal stores, smaller ones whose
// destination is not congruent to the file offset modulo 64 are shifted (reader/shifted_copy.h):
// every size class, at every destination offset within a cache line, on both backends.
TEST(File, ReadsAreExactAtEveryDestinationAlignment) {
  // 1 byte first, so the others start at odd offsets; then a bounced-and-shifted size, a
  // streamed one not a multiple of 64, and one spanning several bounce buffers.
  const std::vector<std::size_t> sizes = {1, 20'003, (std::size_t{3} << 19) + 13, (std::size_t{5} << 20) + 1};
  std::vector<std::vector<std::uint8_t>> data;
  std::vector<safetensors::tensor_data> t;
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    auto& d = data.emplace_back(sizes[i]);
    for (std::size_t k = 0; k < d.size(); ++k) d[k] = static_cast<std::uint8_t>((k * 131 + i * 7) >> 2);
  }
  std::vector<std::string> names;
  for (std::size_t i = 0; i < sizes.size(); ++i) names.push_back(fmt::format("t{}", i));
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    t.push_back({names[i], dtype::U8, {sizes[i]}, std::as_bytes(std::span(data[i]))});
  }
  const auto path = (st_test::scratch_dir() / "alignments.safetensors").string();
  ASSERT_OK(safetensors::write_file(path, t));
  for (auto backend : {safetensors::io_backend::mmap, safetensors::io_backend::pread}) {
    auto f = open_with(path, backend);
    ASSERT_OK(f);
    for (std::size_t i = 0; i < sizes.size(); ++i) {
      const auto* info = f->find(names[i]);
      ASSERT_NE(info, nullptr);
      std::vector<std::byte> buffer(sizes[i] + 128);
      for (std::size_t shift = 0; shift < 64; shift += 8) {
        // A guard byte on each side: nothing is written outside the destination.
        std::fill(buffer.begin(), buffer.end(), std::byte{0xA5});
        const auto destination = std::span(buffer).subspan(64 + shift, sizes[i]);
        ASSERT_OK(f->read_into(*info, destination));
        EXPECT_TRUE(std::equal(destination.begin(), destination.end(), std::as_bytes(std::span(data[i])).begin()))
            << safetensors::backend_name(backend) << " size " << sizes[i] << " shift " << shift;
        EXPECT_EQ(buffer[64 + shift - 1], std::byte{0xA5});
        EXPECT_EQ(buffer[64 + shift + sizes[i]], std::byte{0xA5});
      }
    }
  }
}

// open_options::parser: the header is parsed by the caller's parser, and a header handed
// back with take_header + recycle is refilled by the next open (no fresh arrays).
TEST(File, OpenWithAHeaderParserRecyclesTheHeaderItIsGiven) {
  const auto path = write_sample(st_test::scratch_dir());
  safetensors::header_parser parser;
  for (auto backend : {safetensors::io_backend::mmap, safetensors::io_backend::pread}) {
    safetensors::open_options o;
    o.backend = backend;
    o.parser = &parser;
    auto f = safetensors::file::open(path, o);
    ASSERT_OK(f) << f.err().message;
    auto plain = open_with(path, backend);
    ASSERT_OK(plain);
    ASSERT_EQ(f->tensors().size(), plain->tensors().size());
    for (std::size_t i = 0; i < f->tensors().size(); ++i) {
      EXPECT_EQ(f->tensors()[i].name, plain->tensors()[i].name);
      EXPECT_TRUE(std::ranges::equal(f->tensors()[i].shape, plain->tensors()[i].shape));
      EXPECT_EQ(f->tensors()[i].begin, plain->tensors()[i].begin);
    }
    const char* names = f->find("w")->name.data();
    parser.recycle(std::move(*f).take_header());
    auto g = safetensors::file::open(path, o);
    ASSERT_OK(g);
    EXPECT_EQ(g->find("w")->name.data(), names) << "the recycled name arena is reused";
    auto w = g->load("w");
    ASSERT_OK(w);
    EXPECT_EQ(w->size(), 24U);
  }
  // Errors are the same as without the parser, with the path.
  const auto bad = (st_test::scratch_dir() / "bad-header.safetensors").string();
  {
    std::FILE* out = std::fopen(bad.c_str(), "wb");
    ASSERT_NE(out, nullptr);
    const char bytes[] = "\x02\0\0\0\0\0\0\0{]";
    std::fwrite(bytes, 1, 10, out);
    std::fclose(out);
  }
  safetensors::open_options o;
  o.parser = &parser;
  auto with = safetensors::file::open(bad, o);
  auto without = safetensors::file::open(bad);
  ASSERT_FALSE(with.ok());
  ASSERT_FALSE(without.ok());
  EXPECT_EQ(with.err().code, without.err().code);
  EXPECT_EQ(with.err().message, without.err().message);
  EXPECT_EQ(with.err().path, bad);
}

TEST(File, TensorsAreInDataOrderAndFoundByName) {
  const auto path = write_sample(st_test::scratch_dir());
  auto f = safetensors::file::open(path);
  ASSERT_OK(f);
  ASSERT_EQ(f->tensors().size(), 2U);
  EXPECT_EQ(f->tensors()[0].name, "w");  // F32 sorts before BF16 in the writer
  EXPECT_EQ(f->tensors()[1].name, "b");
  EXPECT_EQ(f->find("b")->begin, 24U);
  auto v = f->view("w");
  ASSERT_OK(v);
  float first = 0;
  std::memcpy(&first, v->data.data(), 4);
  EXPECT_EQ(first, 1.0F);
}

TEST(File, OpenErrorsCarryThePathAndTheOsReason) {
  const auto path = (st_test::scratch_dir() / "absent.safetensors").string();
  for (auto backend : {safetensors::io_backend::mmap, safetensors::io_backend::pread}) {
    auto f = open_with(path, backend);
    ASSERT_ERROR(f, safetensors::error_code::io);
    EXPECT_EQ(f.err().path, path);
    EXPECT_EQ(f.err().os_errno, ENOENT);
    EXPECT_EQ(f.err().to_string(), path + ": cannot open file: No such file or directory");
  }
  auto dir = open_with(st_test::scratch_dir().string(), safetensors::io_backend::mmap);
  ASSERT_FALSE(dir.ok());
  EXPECT_EQ(dir.err().os_errno, EISDIR);
}

TEST(File, ValidationErrorsSayWhichTensorAndWhere) {
  // F32 [2] claims 8 bytes but covers 4: TensorInvalidInfo at the tensor's data.
  const std::string json = R"({"x":{"dtype":"F32","shape":[2],"data_offsets":[0,4]}})";
  std::vector<std::byte> file(8 + json.size() + 4);
  file[0] = static_cast<std::byte>(json.size());
  std::memcpy(file.data() + 8, json.data(), json.size());
  auto r = safetensors::parse_file_bytes(file);
  ASSERT_ERROR(r, safetensors::error_code::tensor_invalid_info);
  EXPECT_EQ(r.err().tensor.value_or(""), "x");
  EXPECT_EQ(r.err().offset.value_or(0), 8 + json.size());
}

TEST(File, FromBufferMovesKeepViewsValid) {
  const float w[2] = {7, 8};
  safetensors::tensor_data t{"w", dtype::F32, {2}, std::as_bytes(std::span(w))};
  auto bytes = safetensors::serialize(std::span(&t, 1));
  ASSERT_OK(bytes);
  auto f = safetensors::file::from_buffer(*bytes);
  ASSERT_OK(f);
  safetensors::file moved = std::move(f).value();
  auto v = moved.view("w");
  ASSERT_OK(v);
  EXPECT_EQ(v->name(), "w");
  EXPECT_EQ(v->shape()[0], 2U);
}

}  // namespace

namespace {

/// A mapped file holds no descriptor: far more files than the descriptor limit stay open.
TEST(File, MappedFilesDoNotHoldDescriptors) {
  const auto path = write_sample(st_test::scratch_dir());
  pid_t child = ::fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    struct rlimit low {
      64, 64
    };
    if (::setrlimit(RLIMIT_NOFILE, &low) != 0) ::_exit(3);
    std::vector<safetensors::file> open_files;
    for (int i = 0; i < 500; ++i) {
      auto f = safetensors::file::open(path);
      if (!f) ::_exit(4);
      open_files.push_back(std::move(f).value());
    }
    ::_exit(open_files.back().view("w").ok() ? 0 : 5);
  }
  int status = 0;
  ASSERT_EQ(::waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
}

}  // namespace
