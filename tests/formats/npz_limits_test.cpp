// SPDX-License-Identifier: Apache-2.0
// .npz zip-bomb limits and streaming: a deflated member that expands too far or too many
// times its size is refused up front, members are inflated chunk by chunk, and running
// out of memory is LimitExceeded, never an exception.
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zip.h>
#include <zlib.h>

#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "safetensors/formats/npz.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/sanitizers.h"
#include "support/status_matchers.h"

namespace {

namespace numpy = safetensors::numpy;
namespace fs = std::filesystem;
using safetensors::dtype;
using safetensors::error_code;
using safetensors::numpy::npz_archive;

/// An .npz with one deflated F32 array of zeros, written by the library's own writer (so
/// the bomb is a real deflate stream, about 1000:1).
void write_zero_npz(const fs::path& path, const std::string& name, std::vector<std::uint64_t> shape) {
  auto writer = safetensors::numpy::npz_writer::create(path.string(), {.compress = true});
  ASSERT_OK(writer);
  ASSERT_OK(writer->begin_array(name, dtype::F32, shape));
  std::uint64_t bytes = 4;
  for (auto d : shape) bytes *= d;
  const std::vector<std::byte> zeros(std::size_t{1} << 20);
  for (std::uint64_t done = 0; done < bytes; done += zeros.size()) {
    ASSERT_OK(writer->append(
        std::span(zeros).first(static_cast<std::size_t>(std::min<std::uint64_t>(zeros.size(), bytes - done)))));
  }
  ASSERT_OK(writer->commit());
}

TEST(NpzLimits, GeneratedBombIsRefusedQuicklyNamingMemberAndLimit) {
  const auto path = st_test::scratch_dir() / "bomb.npz";
  write_zero_npz(path, "zeros", {4096, 4096});  // 64 MiB of zeros in about 64 KiB
  ASSERT_LT(fs::file_size(path), std::uintmax_t{1} << 20);
  const auto start = std::chrono::steady_clock::now();
  auto a = numpy::npz_archive::open(path.string());
  const auto took = std::chrono::steady_clock::now() - start;
  ASSERT_ERROR(a, error_code::limit_exceeded) << a.err().to_string();
  EXPECT_NE(a.err().message.find("zeros.npy"), std::string::npos) << a.err().message;
  EXPECT_NE(a.err().message.find("limit of 200:1"), std::string::npos) << a.err().message;
  EXPECT_LT(took, std::chrono::seconds(1)) << "refused before inflating";

  // The same archive within raised limits opens, and the total-size limit still applies.
  safetensors::numpy::npz_options raised;
  raised.max_compression_ratio = 2000;
  EXPECT_OK(numpy::npz_archive::open(path.string(), raised));
  raised.max_expanded_bytes = std::uint64_t{32} << 20;
  auto total = numpy::npz_archive::open(path.string(), raised);
  ASSERT_ERROR(total, error_code::limit_exceeded);
  EXPECT_NE(total.err().message.find("zeros.npy"), std::string::npos) << total.err().message;
  EXPECT_NE(total.err().message.find("limit of 33554432 bytes"), std::string::npos) << total.err().message;
}

TEST(NpzLimits, SmallConstantMembersAreBelowTheRatioFloor) {
  const auto path = st_test::scratch_dir() / "bias.npz";
  write_zero_npz(path, "bias", {250000});  // 1 MB of zeros: a zero-initialised tensor, not a bomb
  EXPECT_OK(numpy::npz_archive::open(path.string()));
}

TEST(NpzLimits, ReadChunksStreamsAndMatchesRead) {
  const auto path = st_test::scratch_dir() / "big.npz";
  write_zero_npz(path, "zeros", {2048, 2048});  // 16 MiB
  safetensors::numpy::npz_options raised;
  raised.max_compression_ratio = 2000;
  auto a = numpy::npz_archive::open(path.string(), raised);
  ASSERT_OK(a);
  std::uint64_t seen = 0;
  std::size_t largest = 0;
  bool all_zero = true;
  ASSERT_OK(a->read_chunks(a->arrays()[0], [&](std::span<const std::byte> chunk) -> safetensors::status {
    seen += chunk.size();
    largest = std::max(largest, chunk.size());
    for (auto b : chunk) all_zero = all_zero && b == std::byte{0};
    return {};
  }));
  EXPECT_EQ(seen, std::uint64_t{16} << 20);
  EXPECT_LE(largest, std::size_t{1} << 20);
  EXPECT_TRUE(all_zero);

  // Every NumPy fixture member (big-endian, Fortran order, deflated) reads the same in
  // small chunks as whole: byteswapping never splits an element.
  int checked = 0;
  for (const auto& e : st_test::numpy_expectations()) {
    if (e.member == "-") continue;
    auto npz = numpy::npz_archive::open(st_test::numpy_fixture(e.file).string());
    ASSERT_OK(npz);
    for (const auto& array : npz->arrays()) {
      if (array.name != e.member) continue;
      std::vector<std::byte> whole(array.header.data_bytes);
      ASSERT_OK(npz->read(array, whole));
      for (std::size_t chunk : {std::size_t{64}, std::size_t{100}, std::size_t{1} << 20}) {
        std::vector<std::byte> streamed;
        ASSERT_OK(npz->read_chunks(
            array,
            [&](std::span<const std::byte> c) -> safetensors::status {
              streamed.insert(streamed.end(), c.begin(), c.end());
              return {};
            },
            chunk));
        EXPECT_EQ(streamed, whole) << e.file << ":" << e.member << " in chunks of " << chunk;
      }
      ++checked;
    }
  }
  EXPECT_GT(checked, 3);
}

/// An archive whose one member declares a Fortran-order F32 [16384, 16384] array (1 GiB)
/// but carries only its deflated header: reading it must allocate the whole array first.
void write_fortran_claim(const fs::path& path) {
  std::string dict = "{'descr': '<f4', 'fortran_order': True, 'shape': (16384, 16384), }";
  std::string header("\x93NUMPY\x01\x00  ", 10);  // appended, not `+`: GCC 12's -Warray-bounds false positive
  header.append(dict);
  while ((header.size() + 1) % 64 != 0) header += ' ';
  header += '\n';
  const auto dict_bytes = header.size() - 10;
  header[8] = static_cast<char>(dict_bytes & 0xFF);
  header[9] = static_cast<char>(dict_bytes >> 8);
  std::vector<unsigned char> deflated(compressBound(static_cast<uLong>(header.size())) + 64);
  z_stream z{};
  ASSERT_EQ(deflateInit2(&z, 6, Z_DEFLATED, -MAX_WBITS, 8, Z_DEFAULT_STRATEGY), Z_OK);
  z.next_in = reinterpret_cast<Bytef*>(header.data());
  z.avail_in = static_cast<uInt>(header.size());
  z.next_out = deflated.data();
  z.avail_out = static_cast<uInt>(deflated.size());
  ASSERT_EQ(deflate(&z, Z_SYNC_FLUSH), Z_OK);  // the stream goes on: the data never comes
  deflated.resize(deflated.size() - z.avail_out);
  deflateEnd(&z);

  zipFile out = zipOpen64(path.c_str(), APPEND_STATUS_CREATE);
  ASSERT_NE(out, nullptr);
  zip_fileinfo info{};
  ASSERT_EQ(zipOpenNewFileInZip2_64(out, "a.npy", &info, nullptr, 0, nullptr, 0, nullptr, Z_DEFLATED, 6, 1, 1), ZIP_OK);
  ASSERT_EQ(zipWriteInFileInZip(out, deflated.data(), static_cast<unsigned>(deflated.size())), ZIP_OK);
  ASSERT_EQ(zipCloseFileInZipRaw64(out, header.size() + (std::uint64_t{1} << 30), 0), ZIP_OK);
  ASSERT_EQ(zipClose(out, nullptr), ZIP_OK);
}

// In a child limited to 256 MiB of address space, reading the 1 GiB Fortran array fails
// to allocate: the reader must say LimitExceeded instead of letting std::bad_alloc out.
TEST(NpzLimits, AllocationFailureIsLimitExceeded) {
#if ST_TEST_UNDER_SANITIZER
  GTEST_SKIP() << "sanitizers reserve far more address space than the limit";
#endif
  const auto path = st_test::scratch_dir() / "fortran.npz";
  write_fortran_claim(path);
  safetensors::numpy::npz_options lax;
  lax.max_compression_ratio = std::uint64_t{1} << 40;
  lax.max_expanded_bytes = std::uint64_t{1} << 40;
  auto a = numpy::npz_archive::open(path.string(), lax);
  ASSERT_OK(a);
  ASSERT_TRUE(a->arrays()[0].header.needs_transpose());
  const pid_t child = fork();
  ASSERT_GE(child, 0);
  if (child == 0) {
    const rlim_t cap = rlim_t{256} << 20;
    rlimit limit{cap, cap};
    rlimit now{};
    if (getrlimit(RLIMIT_AS, &now) == 0 && now.rlim_cur != RLIM_INFINITY && now.rlim_cur < limit.rlim_cur) _exit(3);
    if (setrlimit(RLIMIT_AS, &limit) != 0) _exit(3);
    auto read = a->read_chunks(a->arrays()[0], [](std::span<const std::byte>) -> safetensors::status { return {}; });
    _exit(!read.ok() && read.err().code == error_code::limit_exceeded &&
                  read.err().message.find("out of memory") != std::string::npos
              ? 0
              : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_TRUE(WIFEXITED(status)) << "the child died (an exception escaped?), signal " << WTERMSIG(status);
  EXPECT_EQ(WEXITSTATUS(status), 0) << "reading did not fail with LimitExceeded 'out of memory'";
}

}  // namespace
