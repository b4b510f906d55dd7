// SPDX-License-Identifier: Apache-2.0
// readonly_file::read_all, the one way the library reads a small file whole (indexes, an MLX
// config.json): the bytes exactly, the errno of a missing file, and the size limit checked
// before anything is read.
#include <gtest/gtest.h>

#include <cerrno>
#include <string>

#include "safetensors/readonly_file.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
using safetensors::readonly_file;

TEST(ReadonlyFileReadAll, ReturnsTheWholeFile) {
  const auto path = st_test::scratch_dir() / "small.json";
  const std::string text = "{\"a\": \"\\u0000 and a NUL: \"}";
  std::vector<std::byte> bytes(reinterpret_cast<const std::byte*>(text.data()),
                               reinterpret_cast<const std::byte*>(text.data()) + text.size());
  bytes.push_back(std::byte{0});
  st_test::write_bytes(path, bytes);
  auto read = readonly_file::read_all(path.string(), 1024, "the index");
  ASSERT_OK(read);
  EXPECT_EQ(*read, text + std::string(1, '\0'));
}

TEST(ReadonlyFileReadAll, AFileOverTheLimitIsRefusedNamingItAndBothSizes) {
  const auto path = st_test::scratch_dir() / "big.json";
  st_test::write_bytes(path, std::vector<std::byte>(101, std::byte{'x'}));
  auto read = readonly_file::read_all(path.string(), 100, "config.json");
  EXPECT_ERROR_SAYING(read, error_code::limit_exceeded, "config.json has 101 bytes, the limit is 100");
  EXPECT_EQ(read.err().path, path.string());
  EXPECT_OK(readonly_file::read_all(path.string(), 101, "config.json"));
}

TEST(ReadonlyFileReadAll, AMissingFileCarriesENOENT) {
  const auto path = st_test::scratch_dir() / "missing.json";
  auto read = readonly_file::read_all(path.string(), 100, "the index");
  ASSERT_ERROR(read, error_code::io);
  EXPECT_EQ(read.err().os_errno, ENOENT);
  EXPECT_EQ(read.err().path, path.string());
}

TEST(ReadonlyFileReadAll, ADirectoryIsAnError) {
  EXPECT_ERROR(readonly_file::read_all(st_test::scratch_dir().string(), 100, "the index"), error_code::io);
}

}  // namespace
