// SPDX-License-Identifier: Apache-2.0
// sniff_format: every format's magic bytes, and SafeTensors files are never mistaken.
#include "safetensors/sniff.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <fstream>
#include <string>

#include "safetensors/file.h"
#include "safetensors/header.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

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
    ASSERT_OK(f) << name;
    EXPECT_EQ(*f, file_format::safetensors) << name;
  }
}

TEST(Sniff, MissingFileIsAnIoError) {
  auto f = safetensors::sniff_file((st_test::scratch_dir() / "absent").string());
  ASSERT_ERROR(f, safetensors::error_code::io);
}

TEST(Sniff, Names) {
  EXPECT_EQ(safetensors::file_format_name(file_format::gguf), "GGUF");
  EXPECT_EQ(safetensors::file_format_name(file_format::pytorch_zip), "PyTorch (zip)");
}

/// What reading `bytes` as SafeTensors reports, explained.
safetensors::error explained(const std::string& name, const std::string& bytes) {
  const auto path = st_test::scratch_dir() / name;
  std::ofstream(path, std::ios::binary) << bytes;
  auto f = safetensors::file::open(path.string());
  EXPECT_FALSE(f.ok()) << name;
  return safetensors::explain_format_error(f ? safetensors::error{} : f.err());
}

TEST(Sniff, ExplainsLengthPrefixErrorsByWhatTheFileReallyIs) {
  using safetensors::error_code;
  const auto gguf = explained("model.gguf", std::string("GGUF\x03\0\0\0", 8) + std::string(64, '\0'));
  EXPECT_EQ(gguf.message, "this is a GGUF file, not SafeTensors");
  EXPECT_FALSE(gguf.offset.has_value());
  EXPECT_NE(gguf.path.find("model.gguf"), std::string::npos);  // the path and code stay
  EXPECT_EQ(explained("empty", "").message, "empty file (0 bytes), not a SafeTensors file");
  EXPECT_EQ(explained("short", "abc").message,
            "not a SafeTensors file: 3 bytes, shorter than the 8-byte length prefix");
  EXPECT_NE(explained("text", "hello world, this is text").message.find("its first 8 bytes read as a header length"),
            std::string::npos);
  const auto cut = explained("cut.safetensors", std::string("\x40\0\0\0\0\0\0\0", 8) + "{\"a\":");
  EXPECT_EQ(cut.code, error_code::invalid_header_length);
  EXPECT_EQ(cut.message, "file is truncated: the header needs 64 bytes after the length prefix, the file has 5");
  // Any other error is left as it is.
  auto other = safetensors::make_error(error_code::invalid_header_deserialization, "bad");
  other.path = (st_test::scratch_dir() / "model.gguf").string();
  EXPECT_EQ(safetensors::explain_format_error(other).message, "bad");
}

/// What opening `bytes` reports through `how`: "mmap", "pread", "buffer" or "header".
safetensors::error framing_error(const std::string& how, const std::string& bytes) {
  const auto raw = std::as_bytes(std::span<const char>(bytes.data(), bytes.size()));
  if (how == "buffer") {
    auto f = safetensors::file::from_buffer(raw);
    EXPECT_FALSE(f.ok());
    return f ? safetensors::error{} : f.err();
  }
  if (how == "header") {
    auto n = safetensors::read_header_length(raw.first(std::min<std::size_t>(raw.size(), 512)), raw.size());
    EXPECT_FALSE(n.ok());
    return n ? safetensors::error{} : n.err();
  }
  const auto path = st_test::scratch_dir() / "framing.safetensors";
  std::ofstream(path, std::ios::binary) << bytes;
  safetensors::open_options o;
  o.backend = how == "mmap" ? safetensors::io_backend::mmap : safetensors::io_backend::pread;
  auto f = safetensors::file::open(path.string(), o);
  EXPECT_FALSE(f.ok());
  return f ? safetensors::error{} : f.err();
}

TEST(Sniff, EverySourceWordsAFramingErrorTheSameWay) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"", "empty file (0 bytes), not a SafeTensors file"},
      {"x", "not a SafeTensors file: 1 byte, shorter than the 8-byte length prefix"},
      // A header length equal to the file's size, and one more.
      {std::string("\x48\0\0\0\0\0\0\0", 8) + "{" + std::string(63, ' '),
       "file is truncated: the header needs 72 bytes after the length prefix, the file has 64"},
      {std::string("\x49\0\0\0\0\0\0\0", 8) + "{" + std::string(63, ' '),
       "file is truncated: the header needs 73 bytes after the length prefix, the file has 64"},
      {std::string("GGUF\x03\0\0\0", 8) + std::string(64, '\0'), "this is a GGUF file, not SafeTensors"},
  };
  for (const auto& [bytes, words] : cases) {
    for (const std::string how : {"mmap", "pread", "buffer", "header"}) {
      EXPECT_EQ(framing_error(how, bytes).message, words) << how << " of " << bytes.size() << " bytes";
    }
  }
  // Eight bytes of a longer file cannot tell a SafeTensors start from anything else: the
  // reference's words stay.
  const std::string cut = std::string("\x49\0\0\0\0\0\0\0", 8) + "{" + std::string(63, ' ');
  auto n = safetensors::read_header_length(std::as_bytes(std::span<const char>(cut.data(), 8)), cut.size());
  ASSERT_FALSE(n.ok());
  EXPECT_EQ(n.err().message, "invalid header length: 73 header bytes do not fit in a file of 72 bytes");
}

}  // namespace
