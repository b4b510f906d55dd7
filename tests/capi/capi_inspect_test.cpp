// SPDX-License-Identifier: Apache-2.0
// The C functions the web inspector needs beyond reading (safetensors_c.h): a slice's byte
// ranges read by the caller from a header-only handle, value statistics, format names, and
// MLX quantized layers described and dequantized row by row from caller bytes.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <vector>

#include "safetensors/mlx_quant.h"
#include "safetensors/safetensors_c.h"
#include "serialized_writer.h"

namespace {

/// A header-only handle over `bytes`, as a browser opens a file: the prefix, then 8 + N bytes.
safetensors_file* open_header_only(const std::vector<std::byte>& bytes) {
  std::uint64_t n = 0;
  EXPECT_EQ(safetensors_header_length(bytes.data(), 8, bytes.size(), nullptr, &n), SAFETENSORS_OK);
  safetensors_file* f = nullptr;
  EXPECT_EQ(safetensors_open_header(bytes.data(), 8 + n, bytes.size(), nullptr, &f), SAFETENSORS_OK);
  return f;
}

TEST(CApiInspect, SliceRangesOfAHeaderOnlyHandleGiveTheSliceBytes) {
  std::vector<float> values(4 * 6);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = static_cast<float>(i);
  safetensors_writer* w = nullptr;
  ASSERT_EQ(safetensors_writer_new(&w), SAFETENSORS_OK);
  const std::uint64_t shape[] = {4, 6};
  ASSERT_EQ(safetensors_writer_add_tensor(w, "w", SAFETENSORS_DTYPE_F32, shape, 2, values.data(), 96), SAFETENSORS_OK);
  const auto bytes = serialized(w);
  safetensors_writer_free(w);
  safetensors_file* f = open_header_only(bytes);
  ASSERT_NE(f, nullptr);
  safetensors_slice* s = nullptr;
  ASSERT_EQ(safetensors_slice_new(f, 0, "1:3, ::-2", &s), SAFETENSORS_OK);
  size_t count = 0;
  ASSERT_EQ(safetensors_slice_range_count(s, &count), SAFETENSORS_OK);
  std::vector<std::byte> gathered;
  for (size_t i = 0; i < count; ++i) {
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    ASSERT_EQ(safetensors_slice_range_at(s, i, &offset, &length), SAFETENSORS_OK);
    gathered.insert(gathered.end(), bytes.begin() + static_cast<std::ptrdiff_t>(offset),
                    bytes.begin() + static_cast<std::ptrdiff_t>(offset + length));
  }
  std::vector<float> out(6);
  ASSERT_EQ(safetensors_decode_f32(SAFETENSORS_DTYPE_F32, gathered.data(), gathered.size(), out.data(), out.size()),
            SAFETENSORS_OK);
  EXPECT_EQ(out, (std::vector<float>{11, 9, 7, 17, 15, 13}));
  EXPECT_EQ(safetensors_slice_range_at(s, count, nullptr, nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);
  // The handle holds no data: reading the slice itself is refused.
  EXPECT_EQ(safetensors_slice_read_f32(s, out.data(), out.size()), SAFETENSORS_ERR_UNSUPPORTED);
  safetensors_slice_free(s);
  safetensors_close(f);
}

TEST(CApiInspect, StatsCountNonFiniteValuesApart) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> values = {1, 2, 3, 4, nan, inf, -inf, 0, -0.0F};
  safetensors_stats s{};
  ASSERT_EQ(safetensors_stats_f32(values.data(), values.size(), &s), SAFETENSORS_OK);
  EXPECT_EQ(s.count, 9U);
  EXPECT_EQ(s.nan, 1U);
  EXPECT_EQ(s.pos_inf, 1U);
  EXPECT_EQ(s.neg_inf, 1U);
  EXPECT_EQ(s.zeros, 2U);
  EXPECT_EQ(s.min, 0);
  EXPECT_EQ(s.max, 4);
  EXPECT_DOUBLE_EQ(s.mean, 10.0 / 6);
  EXPECT_NEAR(s.std, std::sqrt(30.0 / 6 - (10.0 / 6) * (10.0 / 6)), 1e-12);  // squares 16+9+4+1
  ASSERT_EQ(safetensors_stats_f32(nullptr, 0, &s), SAFETENSORS_OK);
  EXPECT_TRUE(std::isnan(s.mean));
  EXPECT_EQ(safetensors_stats_f32(nullptr, 1, &s), SAFETENSORS_ERR_INVALID_ARGUMENT);
}

TEST(CApiInspect, SniffNamesOtherFormats) {
  EXPECT_STREQ(safetensors_sniff_format("GGUF\3\0\0\0", 8), "GGUF");
  EXPECT_STREQ(safetensors_sniff_format("\x93NUMPY\1\0", 8), "NumPy .npy");
  EXPECT_STREQ(safetensors_sniff_format("\x80\x02}q", 4), "pickle");
  EXPECT_STREQ(safetensors_sniff_format("\x89HDF\r\n\x1a\n", 8), "HDF5");
  EXPECT_STREQ(safetensors_sniff_format("\2\0\0\0\0\0\0\0{}", 10), "SafeTensors");
  EXPECT_STREQ(safetensors_sniff_format("hello", 5), "unknown");
  EXPECT_STREQ(safetensors_sniff_format(nullptr, 100), "unknown");
}

TEST(CApiInspect, MlxLayersDescribedAndDequantizedByRows) {
  // An affine 4-bit, group 32 layer "l" of 3 x 64 values, quantized by the C++ kernels.
  constexpr std::uint64_t rows = 3;
  constexpr std::uint64_t cols = 64;
  std::vector<float> in(rows * cols);
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = std::sin(static_cast<float>(i)) * 3;
  const safetensors::mlx::quant_params p{safetensors::mlx::quant_mode::affine, 4, 32};
  std::vector<std::byte> weight(rows * cols / 2);
  std::vector<std::byte> scales(rows * cols / 32 * 4);
  std::vector<std::byte> biases(scales.size());
  ASSERT_TRUE(safetensors::mlx::quantize(safetensors::dtype::F32, std::as_bytes(std::span(in)), rows, cols, p,
                                         {weight, scales, biases}));
  safetensors_writer* w = nullptr;
  ASSERT_EQ(safetensors_writer_new(&w), SAFETENSORS_OK);
  const std::uint64_t wshape[] = {rows, cols / 8};
  const std::uint64_t sshape[] = {rows, cols / 32};
  ASSERT_EQ(
      safetensors_writer_add_tensor(w, "l.weight", SAFETENSORS_DTYPE_U32, wshape, 2, weight.data(), weight.size()),
      SAFETENSORS_OK);
  ASSERT_EQ(
      safetensors_writer_add_tensor(w, "l.scales", SAFETENSORS_DTYPE_F32, sshape, 2, scales.data(), scales.size()),
      SAFETENSORS_OK);
  ASSERT_EQ(
      safetensors_writer_add_tensor(w, "l.biases", SAFETENSORS_DTYPE_F32, sshape, 2, biases.data(), biases.size()),
      SAFETENSORS_OK);
  ASSERT_EQ(safetensors_writer_set_metadata(w, "quantization_bits", "4"), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_writer_set_metadata(w, "quantization_group_size", "32"), SAFETENSORS_OK);
  const auto bytes = serialized(w);
  safetensors_writer_free(w);

  safetensors_file* f = open_header_only(bytes);
  ASSERT_NE(f, nullptr);
  safetensors_mlx* m = nullptr;
  ASSERT_EQ(safetensors_mlx_describe(f, &m), SAFETENSORS_OK);
  safetensors_close(f);  // the handle keeps what it needs
  size_t count = 0;
  ASSERT_EQ(safetensors_mlx_layer_count(m, &count), SAFETENSORS_OK);
  ASSERT_EQ(count, 1U);
  safetensors_mlx_layer l{};
  ASSERT_EQ(safetensors_mlx_layer_at(m, 0, &l), SAFETENSORS_OK);
  EXPECT_STREQ(l.path, "l");
  EXPECT_EQ(l.mode, SAFETENSORS_MLX_AFFINE);
  EXPECT_EQ(l.bits, 4U);
  EXPECT_EQ(l.group_size, 32U);
  EXPECT_EQ(l.rows, rows);
  EXPECT_EQ(l.cols, cols);
  EXPECT_EQ(l.scale_dtype, SAFETENSORS_DTYPE_F32);
  EXPECT_EQ(l.ambiguous, 0);
  EXPECT_NE(l.biases, SIZE_MAX);

  // All rows, then row 2 alone from its own bytes: the same values.
  std::vector<float> all(rows * cols);
  ASSERT_EQ(safetensors_mlx_dequantize_f32(m, 0, 0, rows, weight.data(), weight.size(), scales.data(), scales.size(),
                                           biases.data(), biases.size(), all.data(), all.size()),
            SAFETENSORS_OK);
  std::vector<float> expected(rows * cols);
  safetensors::mlx::quantized_ref q{p, rows, cols, weight, safetensors::dtype::F32, scales, biases, std::nullopt};
  ASSERT_TRUE(safetensors::mlx::dequantize(q, safetensors::dtype::F32, std::as_writable_bytes(std::span(expected))));
  EXPECT_EQ(all, expected);
  const std::size_t wrow = weight.size() / rows;
  const std::size_t srow = scales.size() / rows;
  std::vector<float> last(cols);
  ASSERT_EQ(safetensors_mlx_dequantize_f32(m, 0, 2, 1, weight.data() + 2 * wrow, wrow, scales.data() + 2 * srow, srow,
                                           biases.data() + 2 * srow, srow, last.data(), last.size()),
            SAFETENSORS_OK);
  EXPECT_EQ(std::memcmp(last.data(), all.data() + 2 * cols, cols * sizeof(float)), 0);
  EXPECT_EQ(safetensors_mlx_dequantize_f32(m, 0, 2, 2, weight.data(), wrow, scales.data(), srow, biases.data(), srow,
                                           last.data(), last.size()),
            SAFETENSORS_ERR_INVALID_ARGUMENT);  // rows past the end
  EXPECT_EQ(safetensors_mlx_dequantize_f32(m, 0, 0, 1, weight.data(), wrow - 1, scales.data(), srow, biases.data(),
                                           srow, last.data(), last.size()),
            SAFETENSORS_ERR_INVALID_ARGUMENT);  // short weight bytes
  EXPECT_EQ(safetensors_mlx_layer_at(m, 1, &l), SAFETENSORS_ERR_INVALID_ARGUMENT);
  safetensors_mlx_free(m);
}

}  // namespace
