// SPDX-License-Identifier: Apache-2.0
// The GGUF reader: fixtures written by scripts/fixtures/make_gguf_fixtures.py (an
// independent Python writer), and a corruption matrix of handcrafted headers, each
// asserting the error code and the byte offset it names.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/formats/gguf.h"
#include "support/gguf_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace gguf = safetensors::gguf;
using safetensors::error_code;
using st_test::gguf_fixture;

// Little-endian GGUF bytes, field by field.
class gguf_bytes {
 public:
  gguf_bytes& u32(std::uint32_t v) { return le(v, 4); }
  gguf_bytes& u64(std::uint64_t v) { return le(v, 8); }
  gguf_bytes& u8(std::uint8_t v) { return le(v, 1); }
  gguf_bytes& str(std::string_view s) {
    u64(s.size());
    for (char c : s) bytes_.push_back(static_cast<std::byte>(c));
    return *this;
  }
  gguf_bytes& head(std::uint64_t tensors, std::uint64_t kvs, std::uint32_t version = 3) {
    return u32(0x46554747).u32(version).u64(tensors).u64(kvs);
  }
  // One tensor entry; `ne` innermost first, as in the file.
  gguf_bytes& tensor(std::string_view name, std::vector<std::uint64_t> ne, std::uint32_t type, std::uint64_t offset) {
    str(name).u32(static_cast<std::uint32_t>(ne.size()));
    for (std::uint64_t d : ne) u64(d);
    return u32(type).u64(offset);
  }
  gguf_bytes& pad(std::size_t alignment = 32) {
    while (bytes_.size() % alignment != 0) u8(0);
    return *this;
  }
  gguf_bytes& zeros(std::size_t n) {
    bytes_.resize(bytes_.size() + n);
    return *this;
  }
  [[nodiscard]] std::uint64_t size() const { return bytes_.size(); }
  [[nodiscard]] const std::vector<std::byte>& bytes() const { return bytes_; }

 private:
  gguf_bytes& le(std::uint64_t v, int n) {
    for (int i = 0; i < n; ++i) bytes_.push_back(static_cast<std::byte>((v >> (8 * i)) & 0xFF));
    return *this;
  }
  std::vector<std::byte> bytes_;
};

safetensors::result<gguf::header> parse(const gguf_bytes& b) { return gguf::parse_header(b.bytes(), b.size()); }

void expect_error(const gguf_bytes& b, error_code code, std::uint64_t offset, const std::string& words) {
  const auto h = parse(b);
  ASSERT_ERROR(h, code);
  EXPECT_EQ(h.err().offset, offset) << h.err().message;
  EXPECT_NE(h.err().message.find(words), std::string::npos) << h.err().message;
}

TEST(GgufReader, ReadsEveryValueTypeAndTensorOfTheFixture) {
  auto r = gguf::reader::open(gguf_fixture("plain.gguf"));
  ASSERT_OK(r);
  const gguf::header& h = r->header();
  EXPECT_EQ(h.version, 3U);
  EXPECT_EQ(h.alignment, 32U);
  ASSERT_EQ(h.metadata.size(), 19U);
  EXPECT_EQ(std::get<std::string>(*h.find("general.name")), "plain \"fixture\" \xC3\xA9");
  EXPECT_EQ(std::get<std::uint8_t>(*h.find("test.u8")), 200);
  EXPECT_EQ(std::get<std::int8_t>(*h.find("test.i8")), -100);
  EXPECT_EQ(std::get<std::uint16_t>(*h.find("test.u16")), 60000);
  EXPECT_EQ(std::get<std::int16_t>(*h.find("test.i16")), -30000);
  EXPECT_EQ(std::get<std::uint32_t>(*h.find("test.u32")), 4000000000U);
  EXPECT_EQ(std::get<std::int32_t>(*h.find("test.i32")), -2000000000);
  EXPECT_EQ(std::get<float>(*h.find("test.f32")), 0.1F);
  EXPECT_EQ(std::get<bool>(*h.find("test.bool")), true);
  EXPECT_EQ(std::get<std::uint64_t>(*h.find("test.u64")), UINT64_MAX);
  EXPECT_EQ(std::get<std::int64_t>(*h.find("test.i64")), INT64_MIN);
  EXPECT_EQ(std::get<double>(*h.find("test.f64")), 1e-300);
  const auto& strs = std::get<gguf::array_value>(*h.find("test.array.str"));
  EXPECT_EQ(strs.strings, (std::vector<std::string>{"a", "b,\"c\"", "\xC3\xBC"}));
  const auto& ints = std::get<gguf::array_value>(*h.find("test.array.i32"));
  EXPECT_EQ(ints.element_type, gguf::value_type::int32);
  EXPECT_EQ(ints.size(), 3U);
  EXPECT_EQ(std::get<gguf::array_value>(*h.find("test.array.empty")).size(), 0U);

  ASSERT_EQ(h.tensors.size(), 8U);
  const gguf::tensor_info& t = h.tensors[0];
  EXPECT_EQ(t.name, "blk.0.f32");
  EXPECT_EQ(t.shape, (std::vector<std::uint64_t>{2, 3, 4}));  // ne [4, 3, 2] reversed
  EXPECT_EQ(t.byte_size, 96U);
  EXPECT_EQ(h.tensors[1].offset, 96U);
  EXPECT_EQ(h.tensors[2].type, gguf::ggml_type::bf16);
  EXPECT_EQ(h.data_start, 1408U);  // as @huggingface/gguf reports for this file
  std::vector<float> values(24);
  ASSERT_OK(r->read(t, 0, std::as_writable_bytes(std::span(values))));
  EXPECT_EQ(values[0], -5.5F);
  EXPECT_EQ(values[23], 17.5F);
}

TEST(GgufReader, ReadsVersion2AndCustomAlignment) {
  auto v2 = gguf::reader::open(gguf_fixture("v2.gguf"));
  ASSERT_OK(v2);
  EXPECT_EQ(v2->header().version, 2U);
  auto a64 = gguf::reader::open(gguf_fixture("align64.gguf"));
  ASSERT_OK(a64);
  EXPECT_EQ(a64->header().alignment, 64U);
  EXPECT_EQ(a64->header().tensors[1].offset, 64U);
  EXPECT_EQ(a64->header().data_start, 192U);
}

TEST(GgufReader, EveryTruncationIsAnErrorAndAPrefixAsksForMore) {
  const auto bytes = st_test::read_bytes(gguf_fixture("plain.gguf"));
  for (std::size_t n = 0; n < 1408 + 96; n += 7) {
    const auto prefix = std::span(bytes).first(n);
    const auto h = gguf::parse_header(prefix, n);
    ASSERT_ERROR(h, error_code::invalid_format) << n;
    // A prefix of a good file either holds the whole header or asks for more bytes.
    bool incomplete = false;
    const auto more = gguf::parse_header(prefix, bytes.size(), {}, &incomplete);
    EXPECT_NE(more.ok(), incomplete) << n;
    if (n >= 1408) {
      EXPECT_OK(more) << n;
    }
  }
}

TEST(GgufReader, RejectsBadMagicAndVersions) {
  gguf_bytes magic;
  magic.u32(0x46554746).u32(3).u64(0).u64(0);
  expect_error(magic, error_code::invalid_format, 0, "bad magic");
  expect_error(gguf_bytes{}.head(0, 0, 1), error_code::unsupported, 4, "version 1");
  expect_error(gguf_bytes{}.head(0, 0, 0x03000000), error_code::unsupported, 4, "big-endian");
  expect_error(gguf_bytes{}.head(0, 0, 4), error_code::unsupported, 4, "unknown GGUF version 4");
  gguf_bytes short_header;
  short_header.u32(0x46554747).u32(3).u32(0);
  expect_error(short_header, error_code::invalid_format, 8, "truncated");
}

TEST(GgufReader, RejectsCountsTheFileCannotHold) {
  expect_error(gguf_bytes{}.head(0, std::uint64_t{1} << 60), error_code::invalid_format, 16, "cannot fit");
  expect_error(gguf_bytes{}.head(UINT64_MAX, 0), error_code::invalid_format, 8, "cannot fit");
  gguf_bytes big_array;
  big_array.head(0, 1).str("a").u32(9).u32(4).u64(std::uint64_t{1} << 40);  // ARRAY of UINT32
  expect_error(big_array, error_code::invalid_format, 24 + 9 + 8, "exceeds the limit");
  gguf_bytes long_array;
  long_array.head(0, 1).str("a").u32(9).u32(10).u64(1000).zeros(16);  // 1000 UINT64 in 16 bytes
  expect_error(long_array, error_code::invalid_format, 24 + 9 + 8, "cannot fit");
}

TEST(GgufReader, RejectsBadStrings) {
  gguf_bytes huge;
  huge.head(0, 1).u64(std::uint64_t{1} << 40).zeros(16);
  expect_error(huge, error_code::invalid_format, 24, "exceeds the limit");
  gguf_bytes past_end;
  past_end.head(0, 1).u64(100).zeros(20);
  expect_error(past_end, error_code::invalid_format, 24, "past the end");
  gguf_bytes value_past_end;
  value_past_end.head(0, 1).str("k").u32(8).u64(50).zeros(4);
  expect_error(value_past_end, error_code::invalid_format, 37, "past the end");
}

TEST(GgufReader, RejectsBadMetadata) {
  gguf_bytes dup;
  dup.head(0, 2).str("k").u32(0).u8(1).str("k").u32(0).u8(2);
  expect_error(dup, error_code::invalid_format, 24 + 14, "duplicate metadata key 'k'");
  gguf_bytes empty;
  empty.head(0, 1).str("").u32(0).u8(1);
  expect_error(empty, error_code::invalid_format, 24, "empty");
  gguf_bytes nested;
  nested.head(0, 1).str("k").u32(9).u32(9).u64(0);
  expect_error(nested, error_code::invalid_format, 37, "nested");
  gguf_bytes unknown_type;
  unknown_type.head(0, 1).str("k").u32(13).u8(0);
  expect_error(unknown_type, error_code::invalid_format, 33, "unknown value type 13");
  gguf_bytes bad_bool;
  bad_bool.head(0, 1).str("k").u32(7).u8(2);
  expect_error(bad_bool, error_code::invalid_format, 37, "BOOL");
  gguf_bytes align3;
  align3.head(0, 1).str("general.alignment").u32(4).u32(48);
  expect_error(align3, error_code::invalid_format, 24, "power of two");
  gguf_bytes align_type;
  align_type.head(0, 1).str("general.alignment").u32(10).u64(32);
  expect_error(align_type, error_code::invalid_format, 24, "UINT32");
}

constexpr std::uint64_t first_tensor = 24;  // with no metadata

TEST(GgufReader, RejectsBadTensorInfos) {
  gguf_bytes dims;
  dims.head(1, 0).tensor("t", {1, 1, 1, 1, 1}, 0, 0);
  expect_error(dims, error_code::invalid_format, first_tensor + 9, "5 dimensions");
  gguf_bytes removed;
  removed.head(1, 0).tensor("t", {32}, 4, 0).pad().zeros(32);
  expect_error(removed, error_code::invalid_format, first_tensor + 9 + 4 + 8, "removed ggml type 4");
  gguf_bytes long_name;
  long_name.head(1, 0).tensor(std::string(64, 'n'), {1}, 0, 0).pad().zeros(32);
  expect_error(long_name, error_code::invalid_format, first_tensor, "64 bytes");
  gguf_bytes partial_block;
  partial_block.head(1, 0).tensor("q", {16}, 8, 0).pad().zeros(64);  // Q8_0 rows are 32 wide
  expect_error(partial_block, error_code::invalid_format, first_tensor + 9, "multiple of the Q8_0 block size 32");
  gguf_bytes overflow;
  overflow.head(1, 0).tensor("t", {std::uint64_t{1} << 62, 4}, 0, 0).pad();
  expect_error(overflow, error_code::invalid_format, first_tensor + 9, "element count overflows");
  gguf_bytes zero_hides_overflow;  // a zero dimension first does not excuse the others
  zero_hides_overflow.head(1, 0).tensor("t", {0, std::uint64_t{1} << 62, 4}, 0, 0).pad();
  expect_error(zero_hides_overflow, error_code::invalid_format, first_tensor + 9, "element count overflows");
  gguf_bytes negative;
  negative.head(1, 0).tensor("t", {UINT64_MAX}, 0, 0).pad();
  expect_error(negative, error_code::invalid_format, first_tensor + 9 + 4, "exceeds INT64_MAX");
  gguf_bytes bytes_overflow;  // 2^61 F32 elements: 2^63 bytes fits, padding does not matter; 2^62 * 4 wraps
  bytes_overflow.head(1, 0).tensor("t", {std::uint64_t{1} << 62}, 0, 0).pad();
  expect_error(bytes_overflow, error_code::invalid_format, first_tensor + 9, "byte size overflows");
}

TEST(GgufReader, OffsetsMustBeTheRunningPaddedSize) {
  gguf_bytes misaligned;
  misaligned.head(2, 0).tensor("a", {3}, 0, 0).tensor("b", {3}, 0, 12).pad().zeros(64);
  const std::uint64_t second = first_tensor + 9 + 4 + 8 + 4 + 8;
  expect_error(misaligned, error_code::invalid_format, second + 9 + 4 + 8 + 4, "should be 32");
  gguf_bytes dup;
  dup.head(2, 0).tensor("a", {3}, 0, 0).tensor("a", {3}, 0, 32).pad().zeros(64);
  expect_error(dup, error_code::invalid_format, second, "duplicate tensor name 'a'");
  gguf_bytes short_data;
  short_data.head(1, 0).tensor("a", {8}, 0, 0).pad().zeros(31);
  expect_error(short_data, error_code::invalid_format, first_tensor, "past the end of the file");
}

TEST(GgufReader, OpenReadsHeadersLargerThanItsFirstRead) {
  const auto dir = st_test::scratch_dir();
  const std::string big(std::size_t{3} << 20, 't');  // beyond the first 1 MiB read
  gguf_bytes b;
  b.head(1, 1).str("tokenizer.chat_template").u32(8).str(big).tensor("w", {2}, 0, 0).pad().zeros(8);
  st_test::write_bytes(dir / "big.gguf", b.bytes());
  const auto r = gguf::reader::open((dir / "big.gguf").string());
  ASSERT_OK(r);
  EXPECT_EQ(std::get<std::string>(*r->header().find("tokenizer.chat_template")).size(), big.size());
  EXPECT_EQ(r->header().tensors.at(0).name, "w");
}

TEST(GgufReader, ErrorsNameThePathAndTensor) {
  const auto dir = st_test::scratch_dir();
  gguf_bytes b;
  b.head(1, 0).tensor("blk.7.w", {3}, 99, 0).pad().zeros(32);
  st_test::write_bytes(dir / "bad.gguf", b.bytes());
  const auto r = gguf::reader::open((dir / "bad.gguf").string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.err().path, (dir / "bad.gguf").string());
  EXPECT_EQ(r.err().tensor, "blk.7.w");
  EXPECT_NE(r.err().to_string().find("type 99"), std::string::npos);
}

}  // namespace
