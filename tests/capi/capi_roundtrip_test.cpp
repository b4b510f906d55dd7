// SPDX-License-Identifier: Apache-2.0
// The C API end to end: write with safetensors_writer, read back every way (entries,
// metadata, bytes, float32, slices, header-only handles), and the files equal the C++ writer's.
#include <gtest/gtest.h>

#include <cstring>
#include <fstream>
#include <string>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/safetensors_c.h"
#include "safetensors/writer.h"
#include "serialized_writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

struct sample {
  std::vector<float> w = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11};  // [3, 4] F32
  std::vector<std::uint16_t> b = {0x3F80, 0xC000, 0x4040};        // [3] BF16: 1, -2, 3
  std::vector<std::uint8_t> f4 = {0x21, 0x43};                    // [4] F4 (packed)
};

/// A writer holding `s`'s three tensors and two metadata entries.
safetensors_writer* make_writer(const sample& s) {
  safetensors_writer* w = nullptr;
  EXPECT_EQ(safetensors_writer_new(&w), SAFETENSORS_OK);
  const std::uint64_t shape_w[] = {3, 4};
  const std::uint64_t shape_b[] = {3};
  const std::uint64_t shape_f4[] = {4};
  EXPECT_EQ(safetensors_writer_add_tensor(w, "w", SAFETENSORS_DTYPE_F32, shape_w, 2, s.w.data(), 48), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_add_tensor(w, "b", SAFETENSORS_DTYPE_BF16, shape_b, 1, s.b.data(), 6), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_add_tensor(w, "q", SAFETENSORS_DTYPE_F4, shape_f4, 1, s.f4.data(), 2), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_set_metadata(w, "format", "pt"), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_set_metadata(w, "author", "c"), SAFETENSORS_OK);
  return w;
}

TEST(CApi, VersionMatchesTheHeader) {
  EXPECT_STREQ(safetensors_version(), "0.1.0");
  EXPECT_EQ(safetensors_version_number(),
            SAFETENSORS_C_VERSION_MAJOR * 10000U + SAFETENSORS_C_VERSION_MINOR * 100U + SAFETENSORS_C_VERSION_PATCH);
}

TEST(CApi, NamesOfStatusesAndDtypes) {
  EXPECT_STREQ(safetensors_status_name(SAFETENSORS_OK), "ok");
  EXPECT_STREQ(safetensors_status_name(SAFETENSORS_ERR_INVALID_OFFSET), "InvalidOffset");
  EXPECT_STREQ(safetensors_status_name(SAFETENSORS_ERR_UNSAFE_CONTENT), "UnsafeContent");
  EXPECT_STREQ(safetensors_status_name(SAFETENSORS_ERR_OUT_OF_MEMORY), "OutOfMemory");
  EXPECT_STREQ(safetensors_status_name(SAFETENSORS_ERR_CANCELLED), "Cancelled");
  EXPECT_STREQ(safetensors_status_name(SAFETENSORS_ERR_CODE_EXECUTION), "CodeExecution");
  EXPECT_EQ(SAFETENSORS_ERR_CODE_EXECUTION, 25);  // appended: the earlier numbers stay
  EXPECT_STREQ(safetensors_status_name(26), "Unknown");
  EXPECT_STREQ(safetensors_status_name(-1), "Unknown");
  for (int t = 0; t < 22; ++t) {
    const char* name = safetensors_dtype_name(t);
    ASSERT_NE(name, nullptr);
    int back = -1;
    EXPECT_EQ(safetensors_dtype_from_name(name, &back), SAFETENSORS_OK);
    EXPECT_EQ(back, t);
  }
  EXPECT_STREQ(safetensors_dtype_name(SAFETENSORS_DTYPE_F8_E4M3), "F8_E4M3");
  EXPECT_EQ(safetensors_dtype_name(22), nullptr);
  EXPECT_EQ(safetensors_dtype_bits(SAFETENSORS_DTYPE_F6_E2M3), 6U);
  EXPECT_EQ(safetensors_dtype_bits(99), 0U);
  int t = 0;
  EXPECT_EQ(safetensors_dtype_from_name("bf16", &t), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(safetensors_last_error_message()).find("unknown dtype 'bf16'"), std::string::npos);
}

TEST(CApi, WritesTheSameBytesAsTheCxxWriter) {
  const sample s;
  safetensors_writer* w = make_writer(s);
  const auto bytes = serialized(w);
  const std::vector<safetensors::tensor_data> tensors = {
      {"w", safetensors::dtype::F32, {3, 4}, std::as_bytes(std::span(s.w))},
      {"b", safetensors::dtype::BF16, {3}, std::as_bytes(std::span(s.b))},
      {"q", safetensors::dtype::F4, {4}, std::as_bytes(std::span(s.f4))},
  };
  safetensors::write_options o;
  o.metadata = safetensors::metadata_map{{"format", "pt"}, {"author", "c"}};
  auto expected = safetensors::serialize(tensors, o);
  ASSERT_OK(expected);
  EXPECT_EQ(bytes, *expected);

  // The file written atomically has the same bytes; the writer can write again.
  const auto path = (st_test::scratch_dir() / "out.safetensors").string();
  ASSERT_EQ(safetensors_writer_write(w, path.c_str()), SAFETENSORS_OK);
  EXPECT_EQ(st_test::read_bytes(path), bytes);
  ASSERT_EQ(safetensors_writer_set_alignment(w, 64), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_writer_write(w, path.c_str()), SAFETENSORS_OK);
  EXPECT_EQ(st_test::read_bytes(path).size() % 8, 0U);
  safetensors_writer_free(w);
}

TEST(CApi, ReadsEntriesMetadataBytesAndFloats) {
  const sample s;
  safetensors_writer* w = make_writer(s);
  const auto bytes = serialized(w);
  safetensors_writer_free(w);
  const auto path = (st_test::scratch_dir() / "in.safetensors").string();
  st_test::write_bytes(path, bytes);

  for (int backend : {int{SAFETENSORS_BACKEND_MMAP}, int{SAFETENSORS_BACKEND_PREAD}, -1}) {
    SCOPED_TRACE(backend);
    safetensors_options* o = nullptr;
    ASSERT_EQ(safetensors_options_new(&o), SAFETENSORS_OK);
    safetensors_file* f = nullptr;
    if (backend < 0) {
      ASSERT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), o, &f), SAFETENSORS_OK);
    } else {
      ASSERT_EQ(safetensors_options_set_backend(o, backend), SAFETENSORS_OK);
      ASSERT_EQ(safetensors_open(path.c_str(), o, &f), SAFETENSORS_OK);
    }
    safetensors_options_free(o);

    std::size_t count = 0;
    ASSERT_EQ(safetensors_tensor_count(f, &count), SAFETENSORS_OK);
    ASSERT_EQ(count, 3U);
    // File order: widest dtype first (F32, BF16, F4).
    const char* name = nullptr;
    std::size_t length = 0;
    ASSERT_EQ(safetensors_tensor_name(f, 0, &name, &length), SAFETENSORS_OK);
    EXPECT_STREQ(name, "w");
    EXPECT_EQ(length, 1U);
    std::size_t index = 9;
    ASSERT_EQ(safetensors_tensor_find(f, "b", &index), SAFETENSORS_OK);
    EXPECT_EQ(index, 1U);
    int dtype = -1;
    ASSERT_EQ(safetensors_tensor_dtype(f, index, &dtype), SAFETENSORS_OK);
    EXPECT_EQ(dtype, SAFETENSORS_DTYPE_BF16);
    const std::uint64_t* dims = nullptr;
    std::size_t rank = 0;
    ASSERT_EQ(safetensors_tensor_shape(f, 0, &dims, &rank), SAFETENSORS_OK);
    ASSERT_EQ(rank, 2U);
    EXPECT_EQ(dims[0], 3U);
    EXPECT_EQ(dims[1], 4U);
    std::uint64_t begin = 1, end = 0, elements = 0;
    ASSERT_EQ(safetensors_tensor_offsets(f, 0, &begin, &end), SAFETENSORS_OK);
    EXPECT_EQ(begin, 0U);
    EXPECT_EQ(end, 48U);
    ASSERT_EQ(safetensors_tensor_element_count(f, 2, &elements), SAFETENSORS_OK);
    EXPECT_EQ(elements, 4U);
    std::uint64_t header_length = 0, data_start = 0, data_size = 0, file_size = 0;
    ASSERT_EQ(safetensors_file_layout(f, &header_length, &data_start, &data_size, &file_size), SAFETENSORS_OK);
    EXPECT_EQ(data_start, 8 + header_length);
    EXPECT_EQ(data_size, 56U);
    EXPECT_EQ(file_size, bytes.size());

    std::size_t entries = 0;
    ASSERT_EQ(safetensors_metadata_count(f, &entries), SAFETENSORS_OK);
    ASSERT_EQ(entries, 2U);
    const char* key = nullptr;
    const char* value = nullptr;
    ASSERT_EQ(safetensors_metadata_at(f, 0, &key, nullptr, &value, nullptr), SAFETENSORS_OK);
    EXPECT_STREQ(key, "author");  // sorted by key
    EXPECT_STREQ(value, "c");
    ASSERT_EQ(safetensors_metadata_get(f, "format", &value, &length), SAFETENSORS_OK);
    EXPECT_STREQ(value, "pt");
    EXPECT_EQ(length, 2U);
    ASSERT_EQ(safetensors_metadata_get(f, "absent", &value, nullptr), SAFETENSORS_OK);
    EXPECT_EQ(value, nullptr);

    std::vector<float> w_back(12);
    ASSERT_EQ(safetensors_tensor_read(f, 0, w_back.data(), 48), SAFETENSORS_OK);
    EXPECT_EQ(w_back, s.w);
    std::vector<float> b_f32(3);
    ASSERT_EQ(safetensors_tensor_read_f32(f, 1, b_f32.data(), 3), SAFETENSORS_OK);
    EXPECT_EQ(b_f32, (std::vector<float>{1, -2, 3}));
    std::vector<float> q_f32(4), q_expected(4);
    ASSERT_EQ(safetensors_tensor_read_f32(f, 2, q_f32.data(), 4), SAFETENSORS_OK);
    ASSERT_OK(safetensors::decode_to_f32(safetensors::dtype::F4, std::as_bytes(std::span(s.f4)), q_expected));
    EXPECT_EQ(q_f32, q_expected);

    // Slices: rows 1.., every other column, as bytes and as floats.
    safetensors_slice* slice = nullptr;
    ASSERT_EQ(safetensors_slice_new(f, 0, "1:, ::2", &slice), SAFETENSORS_OK);
    ASSERT_EQ(safetensors_slice_shape(slice, &dims, &rank), SAFETENSORS_OK);
    ASSERT_EQ(rank, 2U);
    EXPECT_EQ(dims[0], 2U);
    EXPECT_EQ(dims[1], 2U);
    std::uint64_t slice_bytes = 0;
    ASSERT_EQ(safetensors_slice_byte_size(slice, &slice_bytes), SAFETENSORS_OK);
    EXPECT_EQ(slice_bytes, 16U);
    std::vector<float> part(4);
    ASSERT_EQ(safetensors_slice_read(slice, part.data(), 16), SAFETENSORS_OK);
    EXPECT_EQ(part, (std::vector<float>{4, 6, 8, 10}));
    ASSERT_EQ(safetensors_slice_read_f32(slice, part.data(), 4), SAFETENSORS_OK);
    EXPECT_EQ(part, (std::vector<float>{4, 6, 8, 10}));
    safetensors_slice_free(slice);
    ASSERT_EQ(safetensors_slice_new(f, 1, "-1", &slice), SAFETENSORS_OK);
    ASSERT_EQ(safetensors_slice_element_count(slice, &elements), SAFETENSORS_OK);
    EXPECT_EQ(elements, 1U);
    ASSERT_EQ(safetensors_slice_read_f32(slice, part.data(), 1), SAFETENSORS_OK);
    EXPECT_EQ(part[0], 3.0F);
    safetensors_slice_free(slice);
    safetensors_close(f);
  }
}

TEST(CApi, AHeaderAloneListsButDoesNotRead) {
  const sample s;
  safetensors_writer* w = make_writer(s);
  const auto bytes = serialized(w);
  safetensors_writer_free(w);
  std::uint64_t n = 0;
  ASSERT_EQ(safetensors_header_length(bytes.data(), 8, bytes.size(), nullptr, &n), SAFETENSORS_OK);
  // Too few bytes for the header is the caller's mistake, not the file's.
  safetensors_file* f = nullptr;
  EXPECT_EQ(safetensors_open_header(bytes.data(), 8 + n - 1, bytes.size(), nullptr, &f),
            SAFETENSORS_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(safetensors_open_header(bytes.data(), 8 + n, bytes.size(), nullptr, &f), SAFETENSORS_OK);
  std::size_t count = 0;
  ASSERT_EQ(safetensors_tensor_count(f, &count), SAFETENSORS_OK);
  EXPECT_EQ(count, 3U);
  std::vector<float> out(12);
  EXPECT_EQ(safetensors_tensor_read(f, 0, out.data(), 48), SAFETENSORS_ERR_UNSUPPORTED);
  safetensors_slice* slice = nullptr;
  ASSERT_EQ(safetensors_slice_new(f, 0, "0", &slice), SAFETENSORS_OK);  // planning needs no data
  EXPECT_EQ(safetensors_slice_read_f32(slice, out.data(), 4), SAFETENSORS_ERR_UNSUPPORTED);
  safetensors_slice_free(slice);
  safetensors_close(f);
  // The length prefix's own checks.
  EXPECT_EQ(safetensors_header_length(bytes.data(), 8, 7, nullptr, &n), SAFETENSORS_ERR_HEADER_TOO_SMALL);
  EXPECT_EQ(safetensors_header_length(bytes.data(), 8, 20, nullptr, &n), SAFETENSORS_ERR_INVALID_HEADER_LENGTH);
}

TEST(CApi, NamesWithNulAreCountedNotCut) {
  const std::string json = R"({"a\u0000b":{"dtype":"U8","shape":[1],"data_offsets":[0,1]}})";
  std::vector<std::byte> bytes(8);
  bytes[0] = static_cast<std::byte>(json.size());
  for (char c : json) bytes.push_back(static_cast<std::byte>(c));
  bytes.push_back(std::byte{7});
  safetensors_file* f = nullptr;
  ASSERT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), nullptr, &f), SAFETENSORS_OK);
  const char* name = nullptr;
  std::size_t length = 0;
  ASSERT_EQ(safetensors_tensor_name(f, 0, &name, &length), SAFETENSORS_OK);
  EXPECT_EQ(std::string(name, length), std::string("a\0b", 3));
  safetensors_close(f);
}

TEST(CApi, DecodeAndEncodeElements) {
  const float values[] = {1.0F, -2.5F, 300.0F};
  std::uint16_t bf16[3];
  ASSERT_EQ(safetensors_encode_f32(SAFETENSORS_DTYPE_BF16, values, 3, bf16, sizeof bf16, 0), SAFETENSORS_OK);
  float back[3];
  ASSERT_EQ(safetensors_decode_f32(SAFETENSORS_DTYPE_BF16, bf16, sizeof bf16, back, 3), SAFETENSORS_OK);
  EXPECT_EQ(back[0], 1.0F);
  EXPECT_EQ(back[1], -2.5F);
  EXPECT_EQ(back[2], 300.0F);
  std::uint8_t u8[3];
  EXPECT_EQ(safetensors_encode_f32(SAFETENSORS_DTYPE_U8, values, 3, u8, 3, SAFETENSORS_ENCODE_CHECK_RANGE),
            SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_encode_f32(SAFETENSORS_DTYPE_U8, values, 3, u8, 3, 0), SAFETENSORS_OK);
  EXPECT_EQ(u8[2], 255);  // clamped
  EXPECT_EQ(safetensors_encode_f32(SAFETENSORS_DTYPE_U8, values, 3, u8, 3, 8U), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_decode_f32(SAFETENSORS_DTYPE_C64, bf16, 8, back, 1), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_decode_f32(SAFETENSORS_DTYPE_F32, bf16, 6, back, 3), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_decode_f32(42, bf16, 6, back, 3), SAFETENSORS_ERR_INVALID_ARGUMENT);
}

}  // namespace
