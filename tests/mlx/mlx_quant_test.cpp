// SPDX-License-Identifier: Apache-2.0
// MLX kernels beyond the conformance vectors: the packing table of the notes, round-trip
// error bounds, degenerate groups, negative scales, straddling codes, and bad arguments.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <random>

#include "safetensors/convert.h"
#include "safetensors/mlx_quant.h"
#include "support/byte_views.h"
#include "support/status_matchers.h"

namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;
using st_test::bytes_of;

std::vector<std::uint32_t> words_of(const std::vector<std::byte>& bytes) {
  std::vector<std::uint32_t> w(bytes.size() / 4);
  std::memcpy(w.data(), bytes.data(), bytes.size());
  return w;
}

// notes §5: one 32-element row with q[k] = k mod 2^bits.
TEST(MlxPack, MatchesTheNotesTable) {
  const std::vector<std::pair<unsigned, std::vector<std::uint32_t>>> table = {
      {2, {0xe4e4e4e4, 0xe4e4e4e4}},
      {3, {0x88fac688, 0xc688fac6, 0xfac688fa}},
      {4, {0x76543210, 0xfedcba98, 0x76543210, 0xfedcba98}},
      {5, {0x8a418820, 0xc5a92839, 0xca307b9a, 0x38bdab49, 0xffbbcdeb}},
      {6, {0x440c2040, 0xa2481c61, 0x3ce34c2c, 0x544d2450, 0xa6585d65, 0x7de75c6d}},
      {8, {0x03020100, 0x07060504, 0x0b0a0908, 0x0f0e0d0c, 0x13121110, 0x17161514, 0x1b1a1918, 0x1f1e1d1c}},
  };
  for (const auto& [bits, want] : table) {
    SCOPED_TRACE(bits);
    std::vector<std::uint8_t> codes(32);
    for (unsigned k = 0; k < 32; ++k) codes[k] = static_cast<std::uint8_t>(k % (1U << bits));
    std::vector<std::byte> words(32 * bits / 8);
    ASSERT_TRUE(mlx::pack_codes(codes, bits, words));
    EXPECT_EQ(words_of(words), want);
    std::vector<std::uint8_t> back(32);
    ASSERT_TRUE(mlx::unpack_codes(words, bits, back));
    EXPECT_EQ(back, codes);
  }
}

TEST(MlxPack, StraddlingCodesOfThreeFiveAndSixBits) {
  // §5: 3-bit [1..7,0] -> d1 58 1f; 5-bit [1..8] -> 41 0c 52 cc 41; 6-bit [1,2,3,4] -> 81 30 10.
  // Pad to 32 codes so the row fills whole words; the first bytes are the notes' bytes.
  struct row {
    unsigned bits;
    std::vector<std::uint8_t> head;
    std::vector<std::uint8_t> bytes;
  };
  for (const row& r :
       {row{3, {1, 2, 3, 4, 5, 6, 7, 0}, {0xd1, 0x58, 0x1f}},
        row{5, {1, 2, 3, 4, 5, 6, 7, 8}, {0x41, 0x0c, 0x52, 0xcc, 0x41}}, row{6, {1, 2, 3, 4}, {0x81, 0x30, 0x10}}}) {
    SCOPED_TRACE(r.bits);
    std::vector<std::uint8_t> codes(32, 0);
    std::copy(r.head.begin(), r.head.end(), codes.begin());
    std::vector<std::byte> words(32 * r.bits / 8);
    ASSERT_TRUE(mlx::pack_codes(codes, r.bits, words));
    for (std::size_t i = 0; i < r.bytes.size(); ++i) EXPECT_EQ(std::to_integer<unsigned>(words[i]), r.bytes[i]) << i;
  }
  // A code whose bits span two words comes back whole: 3-bit code 10 covers bits 30..32.
  std::vector<std::uint8_t> codes(32);
  for (unsigned k = 0; k < 32; ++k) codes[k] = static_cast<std::uint8_t>(7 - k % 8);
  for (unsigned bits : {3U, 5U, 6U}) {
    std::vector<std::byte> words(32 * bits / 8);
    ASSERT_TRUE(mlx::pack_codes(codes, bits, words));
    std::vector<std::uint8_t> back(32);
    ASSERT_TRUE(mlx::unpack_codes(words, bits, back));
    EXPECT_EQ(back, codes) << bits;
  }
}

TEST(MlxPack, RejectsBadSizesAndCodes) {
  std::vector<std::uint8_t> codes(32, 0);
  std::vector<std::byte> words(12);
  EXPECT_FALSE(mlx::pack_codes(codes, 4, words));  // 32 4-bit codes need 16 bytes
  EXPECT_FALSE(mlx::pack_codes(codes, 9, words));
  codes[3] = 16;
  std::vector<std::byte> w16(16);
  auto s = mlx::pack_codes(codes, 4, w16);
  ASSERT_ERROR(s, safetensors::error_code::invalid_argument);
}

struct round_trip {
  std::vector<float> out;
  std::vector<float> scales;  // per group, decoded
  std::vector<float> biases;  // affine only
};

round_trip quantize_dequantize(const std::vector<float>& in, std::uint64_t rows, std::uint64_t cols,
                               const mlx::quant_params& p) {
  const std::uint64_t groups = rows * cols / p.group_size;
  const bool affine = p.mode == mlx::quant_mode::affine;
  std::vector<std::byte> w(rows * cols * p.bits / 8), s(groups * (affine ? 4 : 1)), b(affine ? groups * 4 : 0);
  EXPECT_TRUE(mlx::quantize(dtype::F32, bytes_of(in), rows, cols, p, {w, s, b}));
  mlx::quantized_ref q{p, rows, cols, w, affine ? dtype::F32 : dtype::U8, s, b, std::nullopt};
  round_trip r;
  r.out.resize(rows * cols);
  EXPECT_TRUE(mlx::dequantize(q, dtype::F32, std::as_writable_bytes(std::span(r.out))));
  r.scales.resize(groups);
  if (affine) {
    r.biases.resize(groups);
    std::memcpy(r.scales.data(), s.data(), s.size());
    std::memcpy(r.biases.data(), b.data(), b.size());
  } else {
    for (std::size_t i = 0; i < groups; ++i) r.scales[i] = std::ldexp(1.0F, std::to_integer<int>(s[i]) - 127);
  }
  return r;
}

TEST(MlxAffine, RoundTripErrorIsAtMostHalfAStepInsideTheGrid) {
  std::mt19937 rng(7);
  std::normal_distribution<float> normal(0.0F, 0.05F);
  const std::uint64_t rows = 6;
  const std::uint64_t cols = 256;
  std::vector<float> in(rows * cols);
  for (auto& x : in) x = normal(rng);
  for (unsigned bits : {2U, 3U, 4U, 5U, 6U, 8U}) {
    for (unsigned g : {32U, 64U, 128U}) {
      SCOPED_TRACE(testing::Message() << bits << "-bit g" << g);
      const auto r = quantize_dequantize(in, rows, cols, {mlx::quant_mode::affine, bits, g});
      const float n = static_cast<float>((1U << bits) - 1U);
      int inside = 0;
      for (std::size_t i = 0; i < in.size(); ++i) {
        const float s = r.scales[i / g];
        const float err = std::fabs(r.out[i] - in[i]);
        // MLX's own bound (test_quantize_dequantize): one step.
        ASSERT_LE(err, std::fabs(s) + 1e-6F) << "element " << i;
        // Half a step (plus float32 rounding) inside the grid b + s*[0, n]. MLX snaps the
        // scale so that the group's edge is exact, which can leave the far extreme outside.
        const float code = (in[i] - r.biases[i / g]) / s;
        if (code >= -0.5F && code <= n + 0.5F) {
          ++inside;
          ASSERT_LE(err, 0.5F * std::fabs(s) + 1e-6F) << "element " << i;
        }
      }
      EXPECT_GT(inside, static_cast<int>(in.size() * 9 / 10));
    }
  }
}

TEST(MlxAffine, ZeroAndConstantGroupsAndNegativeScales) {
  const std::uint64_t cols = 64;
  std::vector<float> in(3 * cols);
  for (std::size_t i = 0; i < cols; ++i) {
    in[i] = 0.0F;                                     // row 0: all zero
    in[cols + i] = -0.75F;                            // row 1: constant
    in[2 * cols + i] = static_cast<float>(i) / 8.0F;  // row 2: max side dominates
  }
  const mlx::quant_params p{mlx::quant_mode::affine, 4, 64};
  std::vector<std::byte> w(3 * cols / 2), s(3 * 4), b(3 * 4);
  ASSERT_TRUE(mlx::quantize(dtype::F32, bytes_of(in), 3, cols, p, {w, s, b}));
  std::uint32_t sb[3];
  std::uint32_t bb[3];
  std::memcpy(sb, s.data(), 12);
  std::memcpy(bb, b.data(), 12);
  EXPECT_EQ(sb[0], 0xb3d6bf95U);  // -1e-7: notes §7
  EXPECT_EQ(bb[0], 0U);
  EXPECT_EQ(sb[1], 0xb3d6bf95U);
  EXPECT_EQ(bb[1], 0xbf400000U);  // -0.75
  float s2 = 0;
  std::memcpy(&s2, &sb[2], 4);
  EXPECT_LT(s2, 0.0F) << "the max side dominates: the scale is negative";
  mlx::quantized_ref q{p, 3, cols, w, dtype::F32, s, b, std::nullopt};
  std::vector<float> out(3 * cols);
  ASSERT_TRUE(mlx::dequantize(q, dtype::F32, std::as_writable_bytes(std::span(out))));
  for (std::size_t i = 0; i < cols; ++i) {
    EXPECT_EQ(out[i], 0.0F);
    EXPECT_EQ(out[cols + i], -0.75F);
  }
  EXPECT_EQ(out[2 * cols + 63], 63.0F / 8.0F) << "the edge element round-trips exactly";

  // BF16 and F16 scales of a zero group (notes §7): b3d7 and 8002.
  std::vector<std::uint16_t> half(cols, 0);
  for (auto [type, want] : {std::pair{dtype::BF16, 0xb3d7U}, std::pair{dtype::F16, 0x8002U}}) {
    std::vector<std::byte> hw(cols / 2), hs(2), hb(2);
    ASSERT_TRUE(mlx::quantize(type, std::as_bytes(std::span(half)), 1, cols, p, {hw, hs, hb}));
    std::uint16_t got = 0;
    std::memcpy(&got, hs.data(), 2);
    EXPECT_EQ(got, want);
  }
}

TEST(MlxFp, AllZeroInputDecodesToZeroInEveryMode) {
  const std::vector<float> zeros(2 * 64, 0.0F);
  for (auto mode : {mlx::quant_mode::mxfp4, mlx::quant_mode::mxfp8, mlx::quant_mode::nvfp4}) {
    const auto r = quantize_dequantize(zeros, 2, 64, mlx::default_params(mode));
    for (float v : r.out) ASSERT_EQ(v, 0.0F) << mlx::mode_name(mode);
  }
}

TEST(MlxFp, Mxfp4ExampleOfTheNotes) {
  // §8: scale 7f (2^0), codes 0 0 0 0 1 9 2 4 | 6 5 3 7, words 42910000 00007356.
  std::vector<float> in = {-0.0F, -0.2F, -0.25F, 0.25F, 0.75F, -0.75F, 1.25F, 2.5F, 5.0F, 3.5F, 1.75F, 6.0F};
  in.resize(32, 0.0F);
  std::vector<std::byte> w(16), s(1);
  ASSERT_TRUE(mlx::quantize(dtype::F32, bytes_of(in), 1, 32, mlx::default_params(mlx::quant_mode::mxfp4), {w, s, {}}));
  EXPECT_EQ(std::to_integer<unsigned>(s[0]), 0x7fU);
  const auto words = words_of(w);
  EXPECT_EQ(words[0], 0x42910000U);
  EXPECT_EQ(words[1], 0x00007356U);
}

TEST(MlxFp, Mxfp8RoundTripKeepsThreeMantissaBitsOrSaturates) {
  std::mt19937 rng(3);
  std::uniform_real_distribution<float> u(-1.0F, 1.0F);
  std::vector<float> in(4 * 64);
  for (auto& x : in) x = u(rng);
  const auto r = quantize_dequantize(in, 4, 64, mlx::default_params(mlx::quant_mode::mxfp8));
  int saturated = 0;
  for (std::size_t i = 0; i < in.size(); ++i) {
    const float s = r.scales[i / 32];
    // MLX picks 2^round(log2(amax/448)), so the largest elements may clip to 448 * s.
    if (std::fabs(in[i]) > 448.0F * s) {
      ++saturated;
      ASSERT_EQ(std::fabs(r.out[i]), 448.0F * s) << i;
      continue;
    }
    // E4M3 keeps 3 mantissa bits: half an ulp is 2^-4 relative, 2^-10 * s below the normals.
    ASSERT_LE(std::fabs(r.out[i] - in[i]), std::max(std::fabs(in[i]) * 0.0625F, 0x1p-10F * s)) << i;
  }
  EXPECT_LT(saturated, 32);
}

TEST(MlxKernels, BadArgumentsAreErrors) {
  std::vector<float> in(64, 1.0F);
  std::vector<std::byte> w(32), s(4), b(4);
  // Group size not dividing the row.
  auto r = mlx::quantize(dtype::F32, bytes_of(in), 1, 64, {mlx::quant_mode::affine, 4, 128}, {w, s, b});
  ASSERT_FALSE(r);
  EXPECT_NE(r.err().message.find("does not divide"), std::string::npos) << r.err().message;
  // Unsupported bits / group sizes / fp-mode parameters.
  EXPECT_FALSE(mlx::check_quantize_params({mlx::quant_mode::affine, 7, 64}));
  EXPECT_FALSE(mlx::check_quantize_params({mlx::quant_mode::affine, 4, 16}));
  EXPECT_FALSE(mlx::check_quantize_params({mlx::quant_mode::mxfp4, 4, 64}));
  EXPECT_TRUE(mlx::check_dequantize_params({mlx::quant_mode::affine, 7, 32}));  // MLX's CPU unpacks any width
  EXPECT_FALSE(mlx::check_dequantize_params({mlx::quant_mode::affine, 3, 16}));
  // Wrong sizes and dtypes.
  mlx::quantized_ref q{{mlx::quant_mode::affine, 4, 64}, 1, 64, w, dtype::F32, s, b, std::nullopt};
  std::vector<std::byte> out(64 * 4);
  EXPECT_TRUE(mlx::dequantize(q, dtype::F32, out));
  EXPECT_FALSE(mlx::dequantize(q, dtype::F32, std::span(out).first(100)));
  EXPECT_FALSE(mlx::dequantize(q, dtype::I32, out));
  auto no_biases = q;
  no_biases.biases = {};
  EXPECT_FALSE(mlx::dequantize(no_biases, dtype::F32, out));
  auto u8_scales = q;
  u8_scales.scale_type = dtype::U8;
  EXPECT_FALSE(mlx::dequantize(u8_scales, dtype::F32, out));
  auto short_weight = q;
  short_weight.weight = std::span(w).first(16);
  EXPECT_FALSE(mlx::dequantize(short_weight, dtype::F32, out));
  EXPECT_FALSE(mlx::parse_mode("int4"));
}

TEST(MlxKernels, ThreadedAndSingleThreadedResultsAgree) {
  // Big enough for several threads: 512 rows x 4096.
  const std::uint64_t rows = 512;
  const std::uint64_t cols = 4096;
  std::vector<std::uint16_t> in(rows * cols);
  std::mt19937 rng(11);
  std::normal_distribution<float> normal(0.0F, 0.02F);
  for (auto& x : in) x = safetensors::f32_to_bf16(normal(rng));
  const mlx::quant_params p{mlx::quant_mode::affine, 4, 64};
  const std::uint64_t groups = rows * cols / 64;
  std::vector<std::byte> w(rows * cols / 2), s(groups * 2), b(groups * 2);
  ASSERT_TRUE(mlx::quantize(dtype::BF16, std::as_bytes(std::span(in)), rows, cols, p, {w, s, b}));
  mlx::quantized_ref q{p, rows, cols, w, dtype::BF16, s, b, std::nullopt};
  std::vector<std::byte> one(rows * cols * 2), many(rows * cols * 2);
  ASSERT_TRUE(mlx::dequantize(q, dtype::BF16, one, {1}));
  ASSERT_TRUE(mlx::dequantize(q, dtype::BF16, many, {4}));
  EXPECT_EQ(one, many);
}

}  // namespace
