// SPDX-License-Identifier: Apache-2.0
// sniff_format: every format's magic bytes, and SafeTensors files are never mistaken.
#include "safetensors/sniff.h"

#include <gtest/gtest.h>

#include <string>

#include "safetensors/writer.h"
#include "support/paths.h"

namespace {

using safetensors::file_format;

file_format sniff(const std::string& bytes) {
  return safetensors::sniff_format(std::as_bytes(std::span<const char>(bytes.data(), bytes.size())));
}

/// A zip local file header whose first member is `name`.
std::string zip_with_member(const std::string& name) {
  std::string h = "PK\x03\x04";
  h += std::string(22, '\0');
  h += static_cast<char>(name.size());
  h += '\0';
  h += std::string(2, '\0');
  return h + name;
}

TEST(Sniff, RecognisesForeignFormats) {
  EXPECT_EQ(sniff(std::string("GGUF\x03\0\0\0", 8)), file_format::gguf);
  EXPECT_EQ(sniff("\x93NUMPY\x01\x00"), file_format::npy);
  EXPECT_EQ(sniff(zip_with_member("arr_0.npy")), file_format::npz);
  EXPECT_EQ(sniff(zip_with_member("archive/data.pkl")), file_format::pytorch_zip);
  EXPECT_EQ(sniff(zip_with_member("readme.txt")), file_format::zip);
  EXPECT_EQ(sniff(std::string("PK\x05\x06", 4) + std::string(18, '\0')), file_format::zip);
  EXPECT_EQ(sniff(std::string("\x80\x02}q\x00(X", 7)), file_format::pickle);
  EXPECT_EQ(sniff("\x89HDF\r\n\x1a\n"), file_format::hdf5);
  EXPECT_EQ(sniff("hello world"), file_format::unknown);
  EXPECT_EQ(sniff(""), file_format::unknown);
}

TEST(Sniff, SafeTensorsIsSafeTensorsEvenWhenThePrefixLooksLikePickle) {
  // N = 0x0280 starts with the pickle PROTO bytes 80 02.
  std::string bytes("\x80\x02\0\0\0\0\0\0", 8);
  bytes += "{\"a\":1}";
  EXPECT_EQ(sniff(bytes), file_format::safetensors);
  EXPECT_EQ(sniff(std::string("\x10\0\0\0\0\0\0\0", 8) + "  \n{}"), file_format::safetensors);
}

TEST(Sniff, EveryValidConformanceFileSniffsAsSafeTensors) {
  const auto dir = st_test::conformance_dir() / "format";
  for (const char* name : {"001-minimal-bf16.safetensors", "006-all-dtypes-writer-layout.safetensors",
                           "107-ws-leading.safetensors", "124-metadata-several-keys.safetensors"}) {
    auto f = safetensors::sniff_file((dir / name).string());
    ASSERT_TRUE(f.ok()) << name;
    EXPECT_EQ(*f, file_format::safetensors) << name;
  }
}

TEST(Sniff, MissingFileIsAnIoError) {
  auto f = safetensors::sniff_file((st_test::scratch_dir() / "absent").string());
  ASSERT_FALSE(f.ok());
  EXPECT_EQ(f.err().code, safetensors::error_code::io);
}

TEST(Sniff, Names) {
  EXPECT_EQ(safetensors::file_format_name(file_format::gguf), "GGUF");
  EXPECT_EQ(safetensors::file_format_name(file_format::pytorch_zip), "PyTorch (zip)");
}

}  // namespace
