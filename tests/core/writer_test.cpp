// SPDX-License-Identifier: Apache-2.0
// The writer: byte-exact output (reference layout), ordering, escaping, padding,
// alignment, input errors, and round trips for every dtype.
#include <gtest/gtest.h>

#include <cstring>
#include <filesystem>

#include "safetensors/file.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

using safetensors::dtype;
using safetensors::tensor_data;

std::vector<std::byte> zeros(std::size_t n) { return std::vector<std::byte>(n); }

std::uint64_t prefix_of(const std::vector<std::byte>& file) {
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(file[static_cast<std::size_t>(i)]);
  return n;
}

std::string header_text(const std::vector<std::byte>& file) {
  return {reinterpret_cast<const char*>(file.data()) + 8, static_cast<std::size_t>(prefix_of(file))};
}

std::vector<std::byte> serialize_ok(const std::vector<tensor_data>& tensors, const safetensors::write_options& o = {}) {
  auto bytes = safetensors::serialize(tensors, o);
  EXPECT_OK(bytes) << (bytes ? "" : bytes.err().to_string());
  return bytes ? *bytes : std::vector<std::byte>{};
}

TEST(Writer, EmptyFileIsExactlyTheReferenceBytes) {
  auto file = serialize_ok({});
  const unsigned char expected[] = {8, 0, 0, 0, 0, 0, 0, 0, '{', '}', ' ', ' ', ' ', ' ', ' ', ' '};
  ASSERT_EQ(file.size(), sizeof expected);
  EXPECT_EQ(std::memcmp(file.data(), expected, sizeof expected), 0);
}

TEST(Writer, HeaderLengthsMatchTheReferenceExamples) {
  safetensors::write_options meta;
  meta.metadata = safetensors::metadata_map{{"framework", "pt"}};
  EXPECT_EQ(prefix_of(serialize_ok({}, meta)), 40U);
  EXPECT_EQ(header_text(serialize_ok({}, meta)), R"({"__metadata__":{"framework":"pt"}})" + std::string(5, ' '));

  auto f32_123 = zeros(24);
  EXPECT_EQ(prefix_of(serialize_ok({{"attn.0", dtype::F32, {1, 2, 3}, f32_123}})), 64U);
  auto f4 = zeros(1);
  auto f4_file = serialize_ok({{"attn.0", dtype::F4, {1, 2}, f4}});
  EXPECT_EQ(prefix_of(f4_file), 64U);
  EXPECT_EQ(header_text(f4_file).substr(60), "    ");
  auto f32_1123 = zeros(24);
  EXPECT_EQ(prefix_of(serialize_ok({{"attn0", dtype::F32, {1, 1, 2, 3}, f32_1123}})), 72U);
}

TEST(Writer, OrdersByDtypeDescendingThenName) {
  auto y = zeros(4);
  auto x = zeros(4);
  auto a = zeros(4);
  auto z = zeros(4);
  auto file = serialize_ok(
      {{"z", dtype::U8, {4}, z}, {"a", dtype::U8, {4}, a}, {"x", dtype::BF16, {2}, x}, {"y", dtype::F32, {1}, y}});
  EXPECT_EQ(header_text(file).substr(0, header_text(file).find_last_not_of(' ') + 1),
            R"({"y":{"dtype":"F32","shape":[1],"data_offsets":[0,4]},)"
            R"("x":{"dtype":"BF16","shape":[2],"data_offsets":[4,8]},)"
            R"("a":{"dtype":"U8","shape":[4],"data_offsets":[8,12]},)"
            R"("z":{"dtype":"U8","shape":[4],"data_offsets":[12,16]}})");
}

TEST(Writer, Bf16DataBytesAreLittleEndian) {
  const std::uint8_t data[] = {0x10, 0x40, 0x80, 0x3F, 0x80, 0x3F, 0x80, 0x3F};  // 2.25, 1, 1, 1
  auto file = serialize_ok({{"t", dtype::BF16, {2, 2}, std::as_bytes(std::span(data))}});
  ASSERT_EQ(file.size(), 8 + prefix_of(file) + 8);
  EXPECT_EQ(std::memcmp(file.data() + file.size() - 8, data, 8), 0);
}

TEST(Writer, EscapesNamesLikeSerdeJson) {
  const std::string name = "a\"\\\n\xC3\xA9\x01/";
  auto file = serialize_ok({{name, dtype::U8, {0}, {}}});
  EXPECT_NE(header_text(file).find(R"("a\"\\\n)"
                                   "\xC3\xA9"
                                   R"(\u0001/":)"),
            std::string::npos)
      << header_text(file);
  auto back = safetensors::file::from_buffer(file);
  ASSERT_OK(back);
  EXPECT_NE(back->find(name), nullptr);
}

TEST(Writer, MetadataKeysAreSortedAndEscaped) {
  safetensors::write_options o;
  o.metadata = safetensors::metadata_map{{"b", "2"}, {"a", "line\nbreak \"q\""}, {"c", ""}};
  auto file = serialize_ok({}, o);
  EXPECT_EQ(header_text(file).rfind(R"({"__metadata__":{"a":"line\nbreak \"q\"","b":"2","c":""}})", 0), 0U);
  auto back = safetensors::file::from_buffer(file);
  ASSERT_OK(back);
  EXPECT_EQ(*back->header().metadata(), *o.metadata);
}

TEST(Writer, AlignmentPadsTheHeaderToTheRequestedBoundary) {
  auto data = zeros(12);
  for (std::uint64_t align : {8U, 64U, 4096U}) {
    safetensors::write_options o;
    o.alignment = align;
    auto file = serialize_ok({{"w", dtype::F32, {3}, data}}, o);
    EXPECT_EQ((8 + prefix_of(file)) % align, 0U) << align;
    EXPECT_OK(safetensors::file::from_buffer(file));
  }
  safetensors::write_options bad;
  bad.alignment = 12;
  auto r = safetensors::serialize({}, bad);
  ASSERT_ERROR(r, safetensors::error_code::invalid_argument);
}

TEST(Writer, RejectsBadInputBeforeWriting) {
  auto four = zeros(4);
  struct bad_case {
    std::vector<tensor_data> tensors;
    safetensors::error_code code;
    std::string tensor;
  };
  const std::vector<bad_case> cases = {
      {{{"a", dtype::U8, {4}, four}, {"a", dtype::U8, {4}, four}}, safetensors::error_code::invalid_argument, "a"},
      {{{"__metadata__", dtype::U8, {4}, four}}, safetensors::error_code::invalid_argument, "__metadata__"},
      {{{"w", dtype::F32, {2}, four}}, safetensors::error_code::invalid_argument, "w"},
      {{{"f4", dtype::F4, {3}, four}}, safetensors::error_code::misaligned_slice, "f4"},
      {{{"big", dtype::F32, {UINT64_MAX, 2}, four}}, safetensors::error_code::validation_overflow, "big"},
      {{{std::string("bad\xFF"), dtype::U8, {4}, four}}, safetensors::error_code::invalid_argument, "bad\xFF"},
  };
  const auto dir = st_test::scratch_dir();
  for (const bad_case& c : cases) {
    auto r = safetensors::serialize(c.tensors);
    ASSERT_ERROR(r, c.code);
    ASSERT_TRUE(r.err().tensor.has_value());
    EXPECT_EQ(*r.err().tensor, c.tensor);
    auto w = safetensors::write_file((dir / "out.safetensors").string(), c.tensors);
    EXPECT_FALSE(w.ok());
    EXPECT_TRUE(std::filesystem::is_empty(dir)) << "nothing may be written for " << c.tensor;
  }
}

/// A tensor of every dtype, scalars, zero-size, unicode names: write, read back, compare.
TEST(Writer, RoundTripsEveryDtype) {
  std::vector<std::vector<std::byte>> storage;
  std::vector<tensor_data> tensors;
  for (dtype t : safetensors::all_dtypes()) {
    std::vector<std::uint64_t> shape =
        safetensors::dtype_is_sub_byte(t) ? std::vector<std::uint64_t>{2, 4} : std::vector<std::uint64_t>{3, 2};
    auto size = safetensors::byte_size(t, shape).bytes;
    std::vector<std::byte> bytes(size);
    for (std::size_t i = 0; i < size; ++i) bytes[i] = static_cast<std::byte>((i * 37 + size) & 0xFF);
    storage.push_back(std::move(bytes));
    const std::string name(safetensors::dtype_name(t));
    tensors.push_back({"layer." + name, t, shape, storage.back()});
    if (!safetensors::dtype_is_sub_byte(t)) {
      auto scalar_size = safetensors::byte_size(t, 1).bytes;
      storage.emplace_back(scalar_size, std::byte{0x5A});
      tensors.push_back({"scalar." + name, t, {}, storage.back()});
    }
    tensors.push_back({"empty." + name, t, {0, 7}, {}});
  }
  tensors.push_back({"\xE5\x90\x8D\xE5\x89\x8D.\xF0\x9F\x98\x80", dtype::U8, {1}, storage.front()});
  tensors.back().data = std::span(storage.front()).first(1);
  tensors.push_back({"", dtype::U8, {0}, {}});
  safetensors::write_options o;
  o.metadata = safetensors::metadata_map{{"format", "pt"}, {"quote\"d", "tab\there \xC3\xA9"}};

  const auto path = (st_test::scratch_dir() / "all.safetensors").string();
  ASSERT_OK(safetensors::write_file(path, tensors, o));
  auto in_memory = serialize_ok(tensors, o);
  EXPECT_EQ(st_test::read_bytes(path), in_memory) << "write_file and serialize must agree";

  for (auto backend : {safetensors::io_backend::mmap, safetensors::io_backend::pread}) {
    safetensors::open_options opts;
    opts.backend = backend;
    auto f = safetensors::file::open(path, opts);
    ASSERT_OK(f);
    EXPECT_EQ(f->tensors().size(), tensors.size());
    EXPECT_EQ(*f->header().metadata(), *o.metadata);
    EXPECT_EQ(f->header().data_start() % 8, 0U);
    for (const tensor_data& t : tensors) {
      SCOPED_TRACE(t.name);
      const auto* info = f->find(t.name);
      ASSERT_NE(info, nullptr);
      EXPECT_EQ(info->type, t.type);
      EXPECT_EQ(std::vector<std::uint64_t>(info->shape.begin(), info->shape.end()), t.shape);
      auto loaded = f->load(t.name);
      ASSERT_OK(loaded);
      EXPECT_TRUE(std::equal(loaded->begin(), loaded->end(), t.data.begin(), t.data.end()));
    }
  }
}

/// Our writer reproduces the reference writer's bytes for the corpus files it made.
TEST(Writer, ReproducesReferenceWriterFilesOfTheCorpus) {
  const auto dir = st_test::conformance_dir() / "format";
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    const std::string name = entry.path().filename().string();
    const int number = std::atoi(name.c_str());
    // 001, 002 and 004-028: the writer-layout files (README of the corpus).
    if (entry.path().extension() != ".safetensors" || number < 1 || number > 28 || number == 3) continue;
    SCOPED_TRACE(name);
    auto original = st_test::read_bytes(entry.path());
    auto f = safetensors::file::from_buffer(original);
    ASSERT_OK(f);
    std::vector<tensor_data> tensors;
    for (const auto& info : f->tensors()) {
      tensors.push_back(
          {std::string(info.name), info.type, {info.shape.begin(), info.shape.end()}, f->view(info).data});
    }
    safetensors::write_options o;
    o.metadata = f->header().metadata();
    EXPECT_EQ(serialize_ok(tensors, o), original);
    ++compared;
  }
  EXPECT_EQ(compared, 27);
}

}  // namespace
