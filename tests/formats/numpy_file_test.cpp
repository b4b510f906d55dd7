// SPDX-License-Identifier: Apache-2.0
// numpy_file: an .npy or .npz as its arrays, and their bytes in chunks equal to what the
// single-format readers give.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstddef>
#include <span>
#include <string>
#include <vector>

#include "safetensors/formats/numpy_file.h"
#include "support/fault_injector.h"
#include "support/numpy_fixtures.h"
#include "support/status_matchers.h"

namespace {

namespace numpy = safetensors::numpy;
using safetensors::error_code;

std::vector<std::byte> chunks_of(const numpy::numpy_file& f, const numpy::numpy_file::array& a) {
  std::vector<std::byte> out;
  auto s = f.read_chunks(a, [&](std::span<const std::byte> chunk) -> safetensors::status {
    out.insert(out.end(), chunk.begin(), chunk.end());
    return {};
  });
  EXPECT_OK(s);
  return out;
}

TEST(NumpyFile, AnNpyIsOneArrayNamedAfterTheFileAndConvertedToLittleEndian) {
  const auto path = st_test::numpy_fixture("big_endian_f8.npy").string();
  auto f = numpy::numpy_file::open(path);
  ASSERT_OK(f);
  EXPECT_FALSE(f->is_npz());
  ASSERT_EQ(f->arrays().size(), 1U);
  const auto& a = f->arrays()[0];
  EXPECT_EQ(a.name, "big_endian_f8");
  EXPECT_EQ(a.member, nullptr);
  auto npy = numpy::npy_file::open(path);
  ASSERT_OK(npy);
  std::vector<std::byte> want(npy->header().data_bytes);
  ASSERT_OK(npy->read(want));
  EXPECT_EQ(chunks_of(*f, a), want);
}

TEST(NumpyFile, AnNpzListsItsMembersAndStreamsEach) {
  const auto path = st_test::numpy_fixture("deflated.npz").string();
  auto f = numpy::numpy_file::open(path);
  ASSERT_OK(f);
  EXPECT_TRUE(f->is_npz());
  auto archive = numpy::npz_archive::open(path);
  ASSERT_OK(archive);
  ASSERT_EQ(f->arrays().size(), archive->arrays().size());
  for (std::size_t i = 0; i < f->arrays().size(); ++i) {
    const auto& a = f->arrays()[i];
    const auto& member = archive->arrays()[i];
    EXPECT_EQ(a.name, member.name);
    std::vector<std::byte> want(member.header.data_bytes);
    ASSERT_OK(archive->read(member, want));
    EXPECT_EQ(chunks_of(*f, a), want) << a.name;
  }
}

TEST(NumpyFile, ErrorsNameTheFile) {
  for (const char* name : {"bad_keys.npy", "bad_dotdot.npz"}) {
    const auto path = st_test::numpy_fixture(name).string();
    auto f = numpy::numpy_file::open(path);
    ASSERT_FALSE(f.ok()) << name;
    EXPECT_EQ(f.err().path, path);
  }
  auto missing = numpy::numpy_file::open("/nonexistent/x.npy");
  EXPECT_ERROR(missing, error_code::io);
}

// Opening reads the preambles only; the file is mapped when an array's data is first read. So
// `inspect` (and the browser, which reads a file by ranges) never maps a file of many GB whole.
TEST(NumpyFile, OpeningMapsNothingReadingMapsOnce) {
  for (const char* name : {"dtype_f4.npy", "stored.npz"}) {
    SCOPED_TRACE(name);
    const st_test::fault_injector calls;
    auto f = numpy::numpy_file::open(st_test::numpy_fixture(name).string());
    ASSERT_OK(f);
    EXPECT_EQ(calls.calls(st_test::sys_call::mmap), 0U);
    EXPECT_EQ(chunks_of(*f, f->arrays()[0]).size(), f->arrays()[0].header->data_bytes);
    EXPECT_EQ(chunks_of(*f, f->arrays()[0]).size(), f->arrays()[0].header->data_bytes);
    EXPECT_EQ(calls.calls(st_test::sys_call::mmap), 1U);
  }
}

// A mapping that fails is an error when the data is read, not a crash or wrong bytes.
TEST(NumpyFile, AFailedMappingIsAnErrorWhenReading) {
  for (const char* name : {"dtype_f4.npy", "stored.npz"}) {
    SCOPED_TRACE(name);
    const st_test::fault_injector calls({{.call = st_test::sys_call::mmap, .err = ENOMEM}});
    auto f = numpy::numpy_file::open(st_test::numpy_fixture(name).string());
    ASSERT_OK(f);
    auto s = f->read_chunks(f->arrays()[0], [](std::span<const std::byte>) -> safetensors::status { return {}; });
    EXPECT_FALSE(s);
  }
}

}  // namespace
