// SPDX-License-Identifier: Apache-2.0
// The zip reader under the converters: listing, stored offsets for zero-copy reads,
// inflating, and the refusals (escaping names, bombs, bad CRCs, non-zips).
#include <zip.h>

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "formats/zip/zip_reader.h"
#include "support/amplification_fixtures.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::error_code;
using safetensors::detail::zip_limits;
using safetensors::detail::zip_reader;

struct member {
  std::string name;
  std::string data;
  bool deflate = false;
};

/// Writes an archive with minizip's writer (the reader is what is under test).
void write_zip(const std::filesystem::path& path, const std::vector<member>& members) {
  zipFile z = zipOpen64(path.c_str(), APPEND_STATUS_CREATE);
  ASSERT_NE(z, nullptr);
  for (const member& m : members) {
    zip_fileinfo info{};
    ASSERT_EQ(zipOpenNewFileInZip64(z, m.name.c_str(), &info, nullptr, 0, nullptr, 0, nullptr,
                                    m.deflate ? Z_DEFLATED : 0, m.deflate ? Z_DEFAULT_COMPRESSION : 0, 1),
              ZIP_OK);
    ASSERT_EQ(zipWriteInFileInZip(z, m.data.data(), static_cast<unsigned>(m.data.size())), ZIP_OK);
    ASSERT_EQ(zipCloseFileInZip(z), ZIP_OK);
  }
  ASSERT_EQ(zipClose(z, nullptr), ZIP_OK);
}

std::string as_string(const std::vector<std::byte>& bytes) {
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// Where the central-directory record of `name` starts: its name is the last copy in the file.
std::size_t central_record(const std::vector<std::byte>& bytes, const std::string& name) {
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto at = text.rfind(name);
  EXPECT_NE(at, std::string::npos) << name;
  EXPECT_GE(at, 46U);
  return at - 46;  // the name follows the 46 fixed bytes
}

void put_le(std::vector<std::byte>& bytes, std::size_t at, std::uint64_t value, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) bytes.at(at + i) = static_cast<std::byte>((value >> (8 * i)) & 0xFF);
}

TEST(ZipReader, ListsReadsAndLocatesStoredMembers) {
  const auto path = st_test::scratch_dir() / "a.zip";
  const std::string big(100000, 'x');
  write_zip(path, {{"archive/data.pkl", "pickle-bytes"}, {"archive/data/0", big, true}});
  auto z = zip_reader::open(path);
  ASSERT_TRUE(z) << z.err().to_string();
  ASSERT_EQ(z->entries().size(), 2U);
  const auto* pkl = z->find("archive/data.pkl");
  ASSERT_NE(pkl, nullptr);
  EXPECT_TRUE(pkl->stored);
  auto offset = z->stored_data_offset(*pkl);
  ASSERT_TRUE(offset) << offset.err().to_string();
  const auto file = st_test::read_bytes(path);
  EXPECT_EQ(std::string(reinterpret_cast<const char*>(file.data()) + *offset, 12), "pickle-bytes");
  const auto* data = z->find("archive/data/0");
  ASSERT_NE(data, nullptr);
  EXPECT_FALSE(data->stored);
  auto inflated = z->read_all(*data, 1 << 20);
  ASSERT_TRUE(inflated) << inflated.err().to_string();
  EXPECT_EQ(as_string(*inflated), big);
  EXPECT_ERROR(z->read_all(*data, 1000), error_code::unsafe_content);
  EXPECT_ERROR(z->stored_data_offset(*data), error_code::invalid_argument);
}

TEST(ZipReader, RefusesNamesThatLeaveTheArchive) {
  for (const std::string name : {"../evil", "a/../../evil", "/etc/passwd", "a\\b", "C:/x", "./a"}) {
    const auto path = st_test::scratch_dir() / "escape.zip";
    write_zip(path, {{name, "x"}});
    auto z = zip_reader::open(path);
    ASSERT_ERROR(z, error_code::unsafe_path) << name;
    EXPECT_NE(z.err().message.find(name), std::string::npos) << z.err().message;
  }
}

TEST(ZipReader, RefusesBombsAndTooManyEntries) {
  const auto path = st_test::scratch_dir() / "bomb.zip";
  write_zip(path, {{"zeros.npy", std::string(1 << 20, '\0'), true}, {"b.npy", "b"}});
  zip_limits ratio;
  ratio.max_compression_ratio = 100;
  EXPECT_TRUE(zip_reader::open(path, ratio)) << "1 MiB is not above the ratio floor";
  ratio.ratio_floor_bytes = 1000;
  EXPECT_ERROR(zip_reader::open(path, ratio), error_code::limit_exceeded);
  zip_limits expanded;
  expanded.max_expanded_bytes = 1000;
  EXPECT_ERROR(zip_reader::open(path, expanded), error_code::limit_exceeded);
  zip_limits total;
  total.max_total_uncompressed = 1000;
  EXPECT_ERROR(zip_reader::open(path, total), error_code::unsafe_content);
  zip_limits count;
  count.max_entries = 1;
  EXPECT_ERROR(zip_reader::open(path, count), error_code::unsafe_content);
  EXPECT_TRUE(zip_reader::open(path));
}

TEST(ZipReader, DetectsCorruptDataAndNonZips) {
  const auto path = st_test::scratch_dir() / "crc.zip";
  write_zip(path, {{"a", "hello world"}});
  auto bytes = st_test::read_bytes(path);
  const std::string text(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  const auto at = text.find("hello world");
  ASSERT_NE(at, std::string::npos);
  bytes[at] = std::byte{'j'};
  st_test::write_bytes(path, bytes);
  auto z = zip_reader::open(path);
  ASSERT_TRUE(z) << z.err().to_string();
  auto read = z->read_all(z->entries()[0], 100);
  ASSERT_ERROR(read, error_code::invalid_format);
  EXPECT_NE(read.err().message.find("CRC"), std::string::npos) << read.err().message;

  const auto not_zip = st_test::scratch_dir() / "not.zip";
  st_test::write_bytes(not_zip, std::vector<std::byte>(100, std::byte{7}));
  EXPECT_ERROR(zip_reader::open(not_zip), error_code::invalid_format);
  auto missing = zip_reader::open(st_test::scratch_dir() / "missing.zip");
  EXPECT_ERROR(missing, error_code::io);
  EXPECT_NE(missing.err().message.find("No such file"), std::string::npos) << missing.err().message;
}

// NumPy's ZIP64 fixture marks both sizes of each member, and the local header offset of
// the second, as 0xFFFFFFFF in the central directory; the real values are in the extra field.
TEST(ZipReader, DecodesZip64CentralDirectoryFields) {
  const auto path = st_test::numpy_fixture(st_test::numpy_zip64_fixture);
  const auto file = st_test::read_bytes(path);
  ASSERT_EQ(st_test::hex({file.data() + central_record(file, "second.npy") + 42, 4}), "ffffffff");
  auto z = zip_reader::open(path);
  ASSERT_TRUE(z) << z.err().to_string();
  ASSERT_EQ(z->entries().size(), 2U);
  for (const auto& [name, size] : {std::pair<std::string, std::uint64_t>{"first.npy", 288}, {"second.npy", 160}}) {
    const auto* entry = z->find(name);
    ASSERT_NE(entry, nullptr) << name;
    EXPECT_EQ(entry->uncompressed_size, size) << name;
    EXPECT_EQ(entry->compressed_size, size) << name;
    auto offset = z->stored_data_offset(*entry);
    ASSERT_TRUE(offset) << offset.err().to_string();
    ASSERT_LE(*offset + size, file.size());
    auto data = z->read_all(*entry, 1000);
    ASSERT_TRUE(data) << data.err().to_string();
    EXPECT_EQ(as_string(*data), std::string(reinterpret_cast<const char*>(file.data()) + *offset, size)) << name;
    EXPECT_EQ(as_string(*data).substr(0, 6), "\x93NUMPY") << name;
  }
}

TEST(ZipReader, RefusesMalformedZip64ExtraFields) {
  const auto original = st_test::read_bytes(st_test::numpy_fixture(st_test::numpy_zip64_fixture));
  const std::size_t block = central_record(original, "second.npy") + 46 + 10;  // its only extra block
  ASSERT_EQ(st_test::hex({original.data() + block, 4}), "01001800");           // ZIP64, 24 bytes: two sizes + offset
  // 16 bytes cannot hold the local header offset; 25 run past the 28-byte extra field.
  for (const auto& [size, expected] :
       {std::pair<std::uint64_t, std::string>{16, "too short for the local header offset"},
        {25, "claims 25 bytes but only 24 remain"}}) {
    auto bytes = original;
    put_le(bytes, block + 2, size, 2);
    const auto path = st_test::scratch_dir() / "bad_zip64.zip";
    st_test::write_bytes(path, bytes);
    auto z = zip_reader::open(path);
    ASSERT_ERROR(z, error_code::invalid_format) << size;
    EXPECT_NE(z.err().message.find("second.npy: "), std::string::npos) << z.err().message;
    EXPECT_NE(z.err().message.find(expected), std::string::npos) << z.err().message;
  }
}

TEST(ZipReader, RefusesDeflatedDataLongerOrShorterThanDeclared) {
  std::string data;
  for (int i = 0; i < 20000; ++i) data += static_cast<char>('a' + i % 7);
  const auto path = st_test::scratch_dir() / "lying.zip";
  write_zip(path, {{"lying/member.bin", data, true}});
  const auto original = st_test::read_bytes(path);
  for (const auto& [declared, expected] : {std::pair<std::uint64_t, std::string>{19999, "more than its declared"},
                                           {20001, "truncated: 20000 of 20001 bytes"}}) {
    auto bytes = original;
    put_le(bytes, central_record(bytes, "lying/member.bin") + 24, declared, 4);
    st_test::write_bytes(path, bytes);
    auto z = zip_reader::open(path);
    ASSERT_TRUE(z) << z.err().to_string();
    auto read = z->read_all(z->entries()[0], 1 << 20);
    ASSERT_ERROR(read, error_code::invalid_format) << declared;
    EXPECT_NE(read.err().message.find(expected), std::string::npos) << read.err().message;
  }
}

// An overlap bomb: many directory entries pointing at one member's bytes, which would expand
// without any compression. Refused on opening, naming two members and where they lie.
TEST(ZipReader, RefusesMembersThatOverlap) {
  const auto path = st_test::scratch_dir() / "overlap.zip";
  write_zip(path, {{"m00", "first"}, {"m01", std::string(1000, 'x')}});
  const auto original = st_test::read_bytes(path);
  std::uint64_t m01_local = 0;  // where m01's local header starts
  for (std::size_t i = 4; i-- > 0;) {
    m01_local = (m01_local << 8) | std::to_integer<std::uint64_t>(original[central_record(original, "m01") + 42 + i]);
  }
  ASSERT_TRUE(zip_reader::open(path));
  st_test::write_bytes(
      path, st_test::overlap_bomb(original, "m01", 5, [](std::size_t i) { return "c" + std::to_string(i) + "x"; }));
  auto z = zip_reader::open(path);
  ASSERT_ERROR(z, error_code::unsafe_content);
  const std::string& message = z.err().message;
  EXPECT_NE(message.find("zip members 'm01' "), std::string::npos) << message;
  EXPECT_NE(message.find("and 'c1x' (bytes " + std::to_string(m01_local) + " to "), std::string::npos) << message;
  EXPECT_NE(message.find("overlap"), std::string::npos) << message;
  EXPECT_EQ(z.err().offset, m01_local);
  EXPECT_EQ(z.err().path, path.string());

  // A member whose data runs into the next member's local header overlaps too.
  auto longer = original;
  const auto m00 = central_record(longer, "m00");
  put_le(longer, m00 + 20, 200, 4);  // compressed and uncompressed size: 200 bytes, not 5
  put_le(longer, m00 + 24, 200, 4);
  st_test::write_bytes(path, longer);
  auto into = zip_reader::open(path);
  ASSERT_ERROR(into, error_code::unsafe_content);
  EXPECT_NE(into.err().message.find("'m00' (bytes 0 to "), std::string::npos) << into.err().message;
  EXPECT_NE(into.err().message.find("and 'm01' (bytes " + std::to_string(m01_local)), std::string::npos)
      << into.err().message;
}

}  // namespace
