// SPDX-License-Identifier: Apache-2.0
// Dequantization of each ggml block type against values worked out by hand from
// blocks with chosen d / m / scales / quant bytes (the comments show the arithmetic).
#include <gtest/gtest.h>

#include <cstdint>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/formats/gguf_dequantize.h"
#include "support/status_matchers.h"

namespace {

using safetensors::gguf::dequantize;
using safetensors::gguf::ggml_type;

class block {
 public:
  block& half(float v) {
    const std::uint16_t h = safetensors::f32_to_f16(v);
    return u8(h & 0xFF).u8(h >> 8);
  }
  block& f32(float v) {
    const auto bits = std::bit_cast<std::uint32_t>(v);
    for (int i = 0; i < 4; ++i) u8((bits >> (8 * i)) & 0xFF);
    return *this;
  }
  block& u8(unsigned v, int count = 1) {
    for (int i = 0; i < count; ++i) bytes_.push_back(static_cast<std::byte>(v));
    return *this;
  }
  block& u32(std::uint32_t v) {
    for (int i = 0; i < 4; ++i) u8((v >> (8 * i)) & 0xFF);
    return *this;
  }
  [[nodiscard]] const std::vector<std::byte>& bytes() const { return bytes_; }
  [[nodiscard]] std::size_t size() const { return bytes_.size(); }

 private:
  std::vector<std::byte> bytes_;
};

std::vector<float> run(ggml_type t, const block& b, std::size_t elements) {
  std::vector<float> out(elements, -999.0F);
  const auto s = dequantize(t, b.bytes(), out);
  EXPECT_OK(s) << (s.ok() ? "" : s.err().message);
  return out;
}

TEST(GgufDequantize, Q8_0IsCodeTimesScale) {
  block b;
  b.half(0.5F);
  for (int j = 0; j < 32; ++j) b.u8(static_cast<unsigned>(static_cast<std::uint8_t>(j - 16)));  // -16..15
  ASSERT_EQ(b.size(), 34U);
  const auto y = run(ggml_type::q8_0, b, 32);
  EXPECT_EQ(y[0], -8.0F);   // -16 * 0.5
  EXPECT_EQ(y[15], -0.5F);  // -1 * 0.5
  EXPECT_EQ(y[16], 0.0F);
  EXPECT_EQ(y[31], 7.5F);  // 15 * 0.5
}

TEST(GgufDequantize, Q8_1IgnoresTheSumField) {
  block b;
  b.half(0.25F).half(1000.0F);  // d, s
  b.u8(0xFD).u8(5).u8(0, 30);   // -3, 5, zeros
  ASSERT_EQ(b.size(), 36U);
  const auto y = run(ggml_type::q8_1, b, 32);
  EXPECT_EQ(y[0], -0.75F);
  EXPECT_EQ(y[1], 1.25F);
  EXPECT_EQ(y[31], 0.0F);
}

TEST(GgufDequantize, Q4_0LowNibblesFirstHalfHighNibblesSecond) {
  block b;
  b.half(2.0F);
  for (unsigned j = 0; j < 16; ++j) b.u8(j | ((15 - j) << 4));
  ASSERT_EQ(b.size(), 18U);
  const auto y = run(ggml_type::q4_0, b, 32);
  EXPECT_EQ(y[0], -16.0F);   // (0 - 8) * 2
  EXPECT_EQ(y[15], 14.0F);   // (15 - 8) * 2
  EXPECT_EQ(y[16], 14.0F);   // high nibble of byte 0 is 15
  EXPECT_EQ(y[31], -16.0F);  // high nibble of byte 15 is 0
}

TEST(GgufDequantize, Q4_1AddsTheMinimum) {
  block b;
  b.half(0.5F).half(-1.0F);
  for (unsigned j = 0; j < 16; ++j) b.u8(j | (3U << 4));
  ASSERT_EQ(b.size(), 20U);
  const auto y = run(ggml_type::q4_1, b, 32);
  EXPECT_EQ(y[0], -1.0F);  // 0 * 0.5 - 1
  EXPECT_EQ(y[15], 6.5F);  // 15 * 0.5 - 1
  EXPECT_EQ(y[16], 0.5F);  // 3 * 0.5 - 1
  EXPECT_EQ(y[31], 0.5F);
}

TEST(GgufDequantize, Q5_0TakesTheFifthBitFromQh) {
  block b;
  b.half(1.0F).u32(0xAAAAAAAAU);  // bit j set for odd j
  for (unsigned j = 0; j < 16; ++j) b.u8(j | ((15 - j) << 4));
  ASSERT_EQ(b.size(), 22U);
  const auto y = run(ggml_type::q5_0, b, 32);
  EXPECT_EQ(y[0], -16.0F);  // 0 - 16
  EXPECT_EQ(y[1], 1.0F);    // (1 | 16) - 16
  EXPECT_EQ(y[16], -1.0F);  // 15 - 16, bit 16 clear
  EXPECT_EQ(y[17], 14.0F);  // (14 | 16) - 16, bit 17 set
}

TEST(GgufDequantize, Q5_1ScalesAndOffsets) {
  block b;
  b.half(0.5F).half(1.0F).u32(0xFFFF0000U);  // fifth bit for elements 16..31
  b.u8(3U | (5U << 4), 16);
  ASSERT_EQ(b.size(), 24U);
  const auto y = run(ggml_type::q5_1, b, 32);
  EXPECT_EQ(y[0], 2.5F);  // 3 * 0.5 + 1
  EXPECT_EQ(y[15], 2.5F);
  EXPECT_EQ(y[16], 11.5F);  // (5 + 16) * 0.5 + 1
  EXPECT_EQ(y[31], 11.5F);
}

TEST(GgufDequantize, Q2_KQuartersTakeSuccessiveBitPairs) {
  block b;
  b.u8(0x21, 8);   // groups 0..7: scale 1, min 2
  b.u8(0x12, 8);   // groups 8..15: scale 2, min 1
  b.u8(0xE4, 64);  // 2-bit fields 0, 1, 2, 3 at shifts 0, 2, 4, 6
  b.half(1.0F).half(0.5F);
  ASSERT_EQ(b.size(), 84U);
  const auto y = run(ggml_type::q2_k, b, 256);
  // First half: 1 * 1 * k - 0.5 * 2 for quarter k.
  EXPECT_EQ(y[0], -1.0F);
  EXPECT_EQ(y[31], -1.0F);
  EXPECT_EQ(y[32], 0.0F);
  EXPECT_EQ(y[64], 1.0F);
  EXPECT_EQ(y[127], 2.0F);
  // Second half: 1 * 2 * k - 0.5 * 1.
  EXPECT_EQ(y[128], -0.5F);
  EXPECT_EQ(y[160], 1.5F);
  EXPECT_EQ(y[192], 3.5F);
  EXPECT_EQ(y[255], 5.5F);
}

TEST(GgufDequantize, Q3_KSixBitScalesAndHighBitMask) {
  block b;
  b.u8(0x0F, 32);  // hmask: bits 0..3 set, so the second half subtracts 4
  b.u8(0xE4, 64);  // low 2 bits: quarter k holds k
  // Scales: all 33 (33 - 32 = 1) except scale 2 = 40 (8) and scale 12 = 16 (-16).
  // Low nibbles: bytes 0..7 low = scales 0..7, high = scales 8..15. High bit pairs:
  // byte 8 + s % 4 at shift 2 * (s / 4).
  b.u8(0x11).u8(0x11).u8(0x18).u8(0x11).u8(0x01).u8(0x11).u8(0x11).u8(0x11);
  b.u8(0x6A).u8(0xAA).u8(0xAA).u8(0xAA);
  b.half(1.0F);
  ASSERT_EQ(b.size(), 110U);
  const auto y = run(ggml_type::q3_k, b, 256);
  EXPECT_EQ(y[0], 0.0F);     // scale 1, q 0
  EXPECT_EQ(y[32], 8.0F);    // scale 8 (index 2), q 1
  EXPECT_EQ(y[48], 1.0F);    // scale 1 (index 3), q 1
  EXPECT_EQ(y[127], 3.0F);   // q 3
  EXPECT_EQ(y[128], -4.0F);  // q 0 - 4
  EXPECT_EQ(y[192], 32.0F);  // scale -16 (index 12) * (2 - 4)
  EXPECT_EQ(y[208], -2.0F);  // scale 1 (index 13) * (2 - 4)
  EXPECT_EQ(y[255], -1.0F);  // 3 - 4
}

// Q4_K / Q5_K scales: s[0..3] = 2 (+ top bits 01 on s[0]), s[4..7] = 1 (+ top bits 10 on
// s[4]), s[8..11] = 0x13. Sub-blocks 0..3: scale 2, min 1; 4: scale 3 | 1 << 4 = 19,
// min 1 | 2 << 4 = 33; 5..7: scale 3, min 1.
block k_scales(block b) {
  b.u8(0x42).u8(2, 3).u8(0x81).u8(1, 3).u8(0x13, 4);
  return b;
}

TEST(GgufDequantize, Q4_KPackedScalesAndMins) {
  block b = k_scales(block{}.half(1.0F).half(0.5F));
  b.u8(0x51, 128);  // low nibble 1, high nibble 5
  ASSERT_EQ(b.size(), 144U);
  const auto y = run(ggml_type::q4_k, b, 256);
  EXPECT_EQ(y[0], 1.5F);   // 2 * 1 - 0.5 * 1
  EXPECT_EQ(y[32], 9.5F);  // 2 * 5 - 0.5
  EXPECT_EQ(y[64], 1.5F);
  EXPECT_EQ(y[96], 9.5F);
  EXPECT_EQ(y[128], 2.5F);   // 19 * 1 - 0.5 * 33
  EXPECT_EQ(y[160], 14.5F);  // 3 * 5 - 0.5
  EXPECT_EQ(y[192], 2.5F);   // 3 * 1 - 0.5
  EXPECT_EQ(y[255], 14.5F);
}

TEST(GgufDequantize, Q5_KAddsTheFifthBit) {
  block b = k_scales(block{}.half(1.0F).half(0.5F));
  b.u8(0x21, 32);  // qh: bit 0 (sub-block 0) and bit 5 (sub-block 5)
  b.u8(0x51, 128);
  ASSERT_EQ(b.size(), 176U);
  const auto y = run(ggml_type::q5_k, b, 256);
  EXPECT_EQ(y[0], 33.5F);    // 2 * (1 + 16) - 0.5
  EXPECT_EQ(y[32], 9.5F);    // no fifth bit
  EXPECT_EQ(y[160], 62.5F);  // 3 * (5 + 16) - 0.5
  EXPECT_EQ(y[192], 2.5F);
}

TEST(GgufDequantize, Q6_KSplitsLowAndHighBits) {
  block b;
  b.u8(0x21, 64).u8(0x43, 64);  // ql: first half nibbles 1 / 2, second half 3 / 4
  b.u8(0xE4, 64);               // qh: quarter k has high bits k
  for (int g = 0; g < 15; ++g) b.u8(static_cast<unsigned>(g + 1));
  b.u8(0xFF);  // scale 15 is -1
  b.half(0.5F);
  ASSERT_EQ(b.size(), 210U);
  const auto y = run(ggml_type::q6_k, b, 256);
  EXPECT_EQ(y[0], -15.5F);     // 0.5 * 1 * (1 - 32)
  EXPECT_EQ(y[16], -31.0F);    // 0.5 * 2 * (1 - 32)
  EXPECT_EQ(y[32], -22.5F);    // 0.5 * 3 * (1 + 16 - 32)
  EXPECT_EQ(y[64], 5.0F);      // 0.5 * 5 * (2 + 32 - 32)
  EXPECT_EQ(y[96], 63.0F);     // 0.5 * 7 * (2 + 48 - 32)
  EXPECT_EQ(y[128], -130.5F);  // 0.5 * 9 * (3 - 32)
  EXPECT_EQ(y[160], -71.5F);   // 0.5 * 11 * (3 + 16 - 32)
  EXPECT_EQ(y[192], 26.0F);    // 0.5 * 13 * (4 + 32 - 32)
  EXPECT_EQ(y[224], 150.0F);   // 0.5 * 15 * (4 + 48 - 32)
  EXPECT_EQ(y[240], -10.0F);   // 0.5 * -1 * 20
}

TEST(GgufDequantize, Q8_KHasAFloat32Scale) {
  block b;
  b.f32(0.125F);
  for (unsigned j = 0; j < 256; ++j) b.u8(j ^ 0x80U);  // codes -128..127
  b.u8(0, 32);                                         // bsums
  ASSERT_EQ(b.size(), 292U);
  const auto y = run(ggml_type::q8_k, b, 256);
  EXPECT_EQ(y[0], -16.0F);
  EXPECT_EQ(y[128], 0.0F);
  EXPECT_EQ(y[255], 15.875F);
}

TEST(GgufDequantize, PlainTypesDecode) {
  block b;
  b.half(-2.5F).half(65504.0F);
  EXPECT_EQ(run(ggml_type::f16, b, 2), (std::vector<float>{-2.5F, 65504.0F}));
  block ints;
  ints.u32(0xFFFFFFF9U).u32(3);
  EXPECT_EQ(run(ggml_type::i32, ints, 2), (std::vector<float>{-7.0F, 3.0F}));
}

TEST(GgufDequantize, UnsupportedTypeIsNamed) {
  std::vector<std::byte> src(66);
  std::vector<float> dst(256);
  const auto s = dequantize(ggml_type::iq2_xxs, src, dst);
  ASSERT_ERROR(s, safetensors::error_code::unsupported);
  EXPECT_NE(s.err().message.find("IQ2_XXS"), std::string::npos);
}

TEST(GgufDequantize, SizesMustBeWholeBlocks) {
  std::vector<std::byte> src(34);
  std::vector<float> partial(31);
  EXPECT_ERROR(dequantize(ggml_type::q8_0, src, partial), safetensors::error_code::invalid_argument);
  std::vector<float> two_blocks(64);
  EXPECT_ERROR(dequantize(ggml_type::q8_0, src, two_blocks), safetensors::error_code::invalid_argument);
}

}  // namespace
