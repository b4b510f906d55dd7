// SPDX-License-Identifier: Apache-2.0
// .npy: the header literal parser, descrs, layout conversion and the writer, checked
// against files written by NumPy itself (tests/fixtures/numpy, expected.txt).
#include <gtest/gtest.h>

#include <limits>

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "formats/numpy/py_literal.h"
#include "safetensors/formats/npy.h"
#include "support/byte_views.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace numpy = safetensors::numpy;
using safetensors::dtype;
using safetensors::error_code;
using safetensors::numpy::npy_header;
using st_test::bytes_of;

std::string npy_with_header(const std::string& dict, std::size_t data_bytes = 0) {
  std::string out("\x93NUMPY\x01\x00", 8);
  out.push_back(static_cast<char>(dict.size() & 0xFF));
  out.push_back(static_cast<char>(dict.size() >> 8));
  return out + dict + std::string(data_bytes, '\0');
}

safetensors::result<numpy::npy_header> parse_dict(const std::string& dict,
                                                  const safetensors::numpy::npy_options& o = {}) {
  return safetensors::numpy::parse_npy_header(bytes_of(npy_with_header(dict)), o);
}

TEST(NumpyNpy, EveryFixtureMatchesNumpysBytes) {
  int checked = 0;
  for (const auto& e : st_test::numpy_expectations()) {
    if (e.member != "-") continue;
    SCOPED_TRACE(e.file);
    const auto file = st_test::read_bytes(st_test::numpy_fixture(e.file));
    auto h = safetensors::numpy::parse_npy_header(file);
    ASSERT_OK(h);
    EXPECT_EQ(safetensors::dtype_name(h->type), e.dtype);
    EXPECT_EQ(h->shape, e.shape);
    ASSERT_EQ(h->data_offset + h->data_bytes, file.size());
    std::vector<std::byte> out(h->data_bytes);
    ASSERT_OK(safetensors::numpy::npy_to_c_order(*h, std::span(file).subspan(h->data_offset), out));
    EXPECT_EQ(st_test::hex(out), e.hex);
    ++checked;
  }
  EXPECT_GE(checked, 25);
}

TEST(NumpyNpy, HeaderDetailsOfNumpyAndMlxFiles) {
  auto fortran = safetensors::numpy::parse_npy_header(st_test::read_bytes(st_test::numpy_fixture("fortran_3d_i2.npy")));
  ASSERT_OK(fortran);
  EXPECT_TRUE(fortran->fortran_order);
  EXPECT_TRUE(fortran->needs_transpose());
  EXPECT_FALSE(fortran->is_c_order_little_endian());
  EXPECT_EQ(fortran->data_offset % 64, 0U);

  auto big = safetensors::numpy::parse_npy_header(st_test::read_bytes(st_test::numpy_fixture("big_endian_i4.npy")));
  ASSERT_OK(big);
  EXPECT_TRUE(big->big_endian);
  EXPECT_EQ(big->descr, ">i4");

  // MLX: '<V2' is BF16; fortran_order True on a 1-D array needs no copy; data at byte 70.
  auto mlx = safetensors::numpy::parse_npy_header(st_test::read_bytes(st_test::numpy_fixture("mlx_bf16.npy")));
  ASSERT_OK(mlx);
  EXPECT_EQ(mlx->type, dtype::BF16);
  EXPECT_TRUE(mlx->fortran_order);
  EXPECT_TRUE(mlx->is_c_order_little_endian());
  EXPECT_EQ(mlx->data_offset, 70U);

  for (const char* name : {"version_2.npy", "version_3.npy"}) {
    auto v = safetensors::numpy::parse_npy_header(st_test::read_bytes(st_test::numpy_fixture(name)));
    ASSERT_OK(v) << name;
    EXPECT_EQ(v->major_version, name[8] - '0');
  }
}

TEST(NumpyNpy, VoidDtypeNeedsAnOverrideOfTheRightWidth) {
  const auto file = st_test::read_bytes(st_test::numpy_fixture("void_v1.npy"));
  auto plain = safetensors::numpy::parse_npy_header(file);
  ASSERT_ERROR(plain, error_code::unsupported);
  EXPECT_NE(plain.err().message.find("|V1"), std::string::npos) << plain.err().message;

  auto fp8 = safetensors::numpy::parse_npy_header(file, {.void_as = dtype::F8_E4M3});
  ASSERT_OK(fp8);
  EXPECT_EQ(fp8->type, dtype::F8_E4M3);
  EXPECT_EQ(fp8->data_bytes, 4U);

  auto wrong = safetensors::numpy::parse_npy_header(file, {.void_as = dtype::F16});
  ASSERT_ERROR(wrong, error_code::invalid_argument);
  // The override also replaces the BF16 default for two-byte voids.
  auto as_f16 = parse_dict("{'descr': '<V2', 'fortran_order': False, 'shape': (1,)}", {.void_as = dtype::F16});
  ASSERT_OK(as_f16);
  EXPECT_EQ(as_f16->type, dtype::F16);
}

TEST(NumpyNpy, LiteralSyntaxAcceptedLikePython) {
  auto py2 = parse_dict("{\"descr\": \"<f4\", \"fortran_order\": False, \"shape\": (3L, 4L)}");
  ASSERT_OK(py2);
  EXPECT_EQ(py2->shape, (std::vector<std::uint64_t>{3, 4}));
  auto scalar = parse_dict("{'shape': (), 'fortran_order': False, 'descr': '|u1'}\n");
  ASSERT_OK(scalar);
  EXPECT_TRUE(scalar->shape.empty());
  EXPECT_EQ(scalar->data_bytes, 1U);

  auto v = safetensors::numpy::detail::parse_py_literal(" [None, 'a\\'b', (1, -2, [True]), {'k': \"\\x41\"}] ");
  ASSERT_OK(v);
  ASSERT_EQ(v->items.size(), 4U);
  EXPECT_EQ(v->items[1].text, "a'b");
  EXPECT_EQ(v->items[2].items[1].integer, -2);
  EXPECT_EQ(v->items[3].find("k")->text, "A");
}

TEST(NumpyNpy, MalformedHeadersAreClearErrors) {
  struct bad_case {
    std::string dict;
    error_code code;
    std::string says;
  };
  const std::vector<bad_case> cases = {
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3)}", error_code::invalid_format, "not a tuple"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,), 'x': 1}", error_code::invalid_format, "exactly"},
      {"{'descr': '<f4', 'descr': '<f4', 'shape': (3,)}", error_code::invalid_format, "duplicate key"},
      {"{'descr': '<f4', 'fortran_order': 0, 'shape': (3,)}", error_code::invalid_format, "fortran_order"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (03,)}", error_code::invalid_format, "leading zero"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (1.5,)}", error_code::invalid_format, "expected ','"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)} x", error_code::invalid_format, "after"},
      {"{'descr': '<f4', 'fortran_order': False, 'shape': (3,)", error_code::invalid_format, "ends early"},
      {"{'descr': b'<f4', 'fortran_order': False, 'shape': (3,)}", error_code::invalid_format, "not a literal"},
      {"{'descr': '<f4\\q', 'fortran_order': False, 'shape': (3,)}", error_code::invalid_format, "escape"},
      {"{'descr': 'float32', 'fortran_order': False, 'shape': (3,)}", error_code::invalid_format, "bad descr"},
      {"{'descr': '<M8[s]', 'fortran_order': False, 'shape': (3,)}", error_code::unsupported, "datetime"},
      {"{'descr': [('a', '<f4')], 'fortran_order': False, 'shape': (3,)}", error_code::unsupported, "structured"},
      {"{'descr': '|O', 'fortran_order': False, 'shape': (3,)}", error_code::unsupported, "object"},
      {"{1: 2}", error_code::invalid_format, "keys must be strings"},
      {fmt::format("[{}{}]", std::string(100, '('), std::string(100, ')')), error_code::invalid_format, "nesting"},
  };
  for (const auto& c : cases) {
    auto h = parse_dict(c.dict);
    ASSERT_ERROR(h, c.code) << c.dict;
    EXPECT_NE(h.err().message.find(c.says), std::string::npos) << c.dict << ": " << h.err().message;
    ASSERT_TRUE(h.err().offset.has_value()) << c.dict;
  }
}

TEST(NumpyNpy, MalformedFixturesAreClearErrors) {
  const std::vector<std::pair<std::string, error_code>> cases = {
      {"bad_truncated_header.npy", error_code::invalid_format},
      {"bad_magic.npy", error_code::invalid_format},
      {"bad_version.npy", error_code::unsupported},
      {"bad_literal.npy", error_code::invalid_format},
      {"bad_eval.npy", error_code::invalid_format},
      {"bad_keys.npy", error_code::invalid_format},
      {"bad_overflow_shape.npy", error_code::validation_overflow},
      {"bad_huge_int.npy", error_code::invalid_format},
      {"bad_negative_dim.npy", error_code::invalid_format},
      {"bad_complex128.npy", error_code::unsupported},
      {"bad_unicode.npy", error_code::unsupported},
      {"bad_deep.npy", error_code::invalid_format},
  };
  for (const auto& [name, code] : cases) {
    auto h = safetensors::numpy::parse_npy_header(st_test::read_bytes(st_test::numpy_fixture(name)));
    ASSERT_ERROR(h, code) << name;
  }
  // A terabyte shape parses (the header is valid) but claims far more data than the file holds.
  auto tb = safetensors::numpy::parse_npy_header(st_test::read_bytes(st_test::numpy_fixture("bad_terabyte_shape.npy")));
  ASSERT_OK(tb);
  EXPECT_EQ(tb->data_bytes, 4ULL << 40);
}

TEST(NumpyNpy, HeaderLengthLimit) {
  std::string huge = npy_with_header(
      fmt::format("{{'descr': '<f4', 'fortran_order': False, 'shape': (1,)}}{}", std::string(2000, ' ')));
  safetensors::numpy::npy_options small_limit;
  small_limit.max_header_bytes = 1000;
  auto h = safetensors::numpy::parse_npy_header(bytes_of(huge), small_limit);
  ASSERT_ERROR(h, error_code::limit_exceeded);
  auto size = safetensors::numpy::npy_preamble_size(bytes_of(huge.substr(0, 12)));
  ASSERT_OK(size);
  EXPECT_EQ(*size, huge.size());
}

TEST(NumpyNpy, EncodedHeadersAreAlignedAndParseBack) {
  for (const dtype t : safetensors::all_dtypes()) {
    const std::vector<std::uint64_t> shape{2, 3};
    auto pre = safetensors::numpy::npy_encode_header(t, shape);
    if (!safetensors::numpy::npy_descr(t)) {
      ASSERT_ERROR(pre, error_code::unsupported);
      continue;
    }
    ASSERT_OK(pre) << safetensors::dtype_name(t);
    EXPECT_EQ(pre->size() % 64, 0U);
    EXPECT_EQ(pre->back(), '\n');
    auto back = safetensors::numpy::parse_npy_header(bytes_of(*pre));
    ASSERT_OK(back);
    EXPECT_EQ(back->type, t);
    EXPECT_EQ(back->shape, shape);
    EXPECT_EQ(back->data_offset, pre->size());
  }
  // numpy's most dimensions, each of the largest size, still fit version 1.0; one more is refused
  // (no numpy would read it), where 30,000 were written in a header of version 2.0.
  const std::vector<std::uint64_t> widest(64, std::numeric_limits<std::int64_t>::max());  // numpy sizes are signed
  auto v1 = safetensors::numpy::npy_encode_header(dtype::F32, widest);
  ASSERT_OK(v1);
  EXPECT_EQ((*v1)[6], '\x01');
  EXPECT_EQ(v1->size() % 64, 0U);
  const std::vector<std::uint64_t> ones(64, 1);
  auto deepest = safetensors::numpy::npy_encode_header(dtype::F32, ones);
  ASSERT_OK(deepest);
  auto back = safetensors::numpy::parse_npy_header(bytes_of(*deepest));
  ASSERT_OK(back);
  EXPECT_EQ(back->shape, ones);
  auto deeper = safetensors::numpy::npy_encode_header(dtype::F32, std::vector<std::uint64_t>(65, 1));
  ASSERT_ERROR(deeper, error_code::unsupported);
  EXPECT_EQ(deeper.err().message, "NumPy arrays have at most 64 dimensions (32 before numpy 2.0); this one has 65");
}

TEST(NumpyNpy, WriteNpyGivesNumpysBytes) {
  const auto dir = st_test::scratch_dir();
  int compared = 0;
  for (const auto& e : st_test::numpy_expectations()) {
    if (e.file.rfind("dtype_", 0) != 0) continue;
    SCOPED_TRACE(e.file);
    std::vector<std::byte> data(e.hex.size() / 2);
    for (std::size_t i = 0; i < data.size(); ++i) data[i] = std::byte(std::stoul(e.hex.substr(2 * i, 2), nullptr, 16));
    const auto path = dir / e.file;
    ASSERT_OK(safetensors::numpy::write_npy(path.string(), *safetensors::parse_dtype(e.dtype), e.shape, data));
    EXPECT_EQ(st_test::read_bytes(path), st_test::read_bytes(st_test::numpy_fixture(e.file)));
    ++compared;
  }
  EXPECT_EQ(compared, 13);

  const std::vector<std::uint64_t> shape{2, 2};
  const std::vector<std::byte> six(6);
  auto short_data = safetensors::numpy::write_npy((dir / "b.npy").string(), dtype::I16, shape, six);
  ASSERT_ERROR(short_data, error_code::invalid_argument);
  EXPECT_FALSE(std::filesystem::exists(dir / "b.npy"));
}

}  // namespace
