// SPDX-License-Identifier: Apache-2.0
// Bulk span conversions (decode_to_f32/f64, encode_from_f32): the same results as the
// scalar codecs for random data at odd lengths and unaligned addresses, the sub-byte
// bit order, integer semantics with and without range checks, and every error path.
#include <gtest/gtest.h>

#include <array>
#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "convert/kernels.h"
#include "safetensors/convert.h"
#include "support/status_matchers.h"

namespace safetensors {
namespace {

std::vector<std::byte> random_bytes(std::size_t n, std::uint32_t seed) {
  std::mt19937 rng(seed);
  std::vector<std::byte> out(n);
  for (auto& b : out) b = std::byte{static_cast<std::uint8_t>(rng())};
  return out;
}

// Random floats: arbitrary bit patterns (NaN, Inf, subnormals included) mixed with
// values of moderate size that land inside the small formats' ranges.
std::vector<float> random_floats(std::size_t n, std::uint32_t seed, bool allow_nan = true) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> unit(-1.0F, 1.0F);
  std::uniform_int_distribution<int> expo(-20, 18);
  std::vector<float> out(n);
  for (std::size_t i = 0; i < n; ++i) {
    float v =
        rng() % 3 == 0 ? std::bit_cast<float>(static_cast<std::uint32_t>(rng())) : std::ldexp(unit(rng), expo(rng));
    if (!allow_nan && std::isnan(v)) v = 1.0F;
    out[i] = v;
  }
  return out;
}

template <class T>
T load(const std::byte* p) {
  T v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Element i of a packed buffer of type t, decoded one at a time with the scalar codecs.
double scalar_decode(dtype t, const std::byte* data, std::size_t i) {
  const auto byte_at = [&](std::size_t k) { return std::to_integer<std::uint8_t>(data[k]); };
  switch (t) {
    case dtype::BOOL: return byte_at(i) != 0 ? 1.0 : 0.0;
    case dtype::U8: return byte_at(i);
    case dtype::I8: return static_cast<std::int8_t>(byte_at(i));
    case dtype::F8_E4M3: return f8_e4m3_to_f32(byte_at(i));
    case dtype::F8_E5M2: return f8_e5m2_to_f32(byte_at(i));
    case dtype::F8_E4M3FNUZ: return f8_e4m3fnuz_to_f32(byte_at(i));
    case dtype::F8_E5M2FNUZ: return f8_e5m2fnuz_to_f32(byte_at(i));
    case dtype::F8_E8M0: return f8_e8m0_to_f32(byte_at(i));
    case dtype::F4: {
      const std::uint8_t b = byte_at(i / 2);
      return f4_to_f32(static_cast<std::uint8_t>(i % 2 == 0 ? b & 0x0F : b >> 4));
    }
    case dtype::F6_E2M3:
    case dtype::F6_E3M2: {
      // Bit 6i of the little-endian stream, read bit by bit.
      unsigned code = 0;
      for (unsigned k = 0; k < 6; ++k) {
        const std::size_t bit = 6 * i + k;
        code |= ((static_cast<unsigned>(byte_at(bit / 8)) >> (bit % 8)) & 1U) << k;
      }
      const auto c = static_cast<std::uint8_t>(code);
      return t == dtype::F6_E2M3 ? f6_e2m3_to_f32(c) : f6_e3m2_to_f32(c);
    }
    case dtype::BF16: return bf16_to_f32(load<std::uint16_t>(data + 2 * i));
    case dtype::F16: return f16_to_f32(load<std::uint16_t>(data + 2 * i));
    case dtype::U16: return load<std::uint16_t>(data + 2 * i);
    case dtype::I16: return load<std::int16_t>(data + 2 * i);
    case dtype::U32: return load<std::uint32_t>(data + 4 * i);
    case dtype::I32: return load<std::int32_t>(data + 4 * i);
    case dtype::F32: return load<float>(data + 4 * i);
    case dtype::F64: return load<double>(data + 8 * i);
    case dtype::U64: return static_cast<double>(load<std::uint64_t>(data + 8 * i));
    case dtype::I64: return static_cast<double>(load<std::int64_t>(data + 8 * i));
    case dtype::C64: break;
  }
  return NAN;
}

bool same_bits_or_nan(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

// Element counts that are valid for t, odd ones included where the type allows.
std::vector<std::size_t> lengths_for(dtype t) {
  std::vector<std::size_t> out;
  for (std::size_t n : {0U, 1U, 2U, 3U, 4U, 7U, 8U, 15U, 16U, 17U, 31U, 32U, 33U, 63U, 100U, 1001U, 4099U}) {
    if (byte_size(t, n).problem == size_problem::none) out.push_back(n);
  }
  return out;
}

TEST(ConvertBulk, DecodeMatchesScalarAtOddLengthsAndOffsets) {
  for (dtype t : all_dtypes()) {
    if (t == dtype::C64) continue;
    for (std::size_t n : lengths_for(t)) {
      const std::size_t bytes = byte_size(t, n).bytes;
      for (std::size_t shift : {0U, 1U, 3U}) {  // unaligned source addresses
        const auto buffer = random_bytes(bytes + shift, static_cast<std::uint32_t>(n * 31 + shift));
        const std::span<const std::byte> src(buffer.data() + shift, bytes);
        std::vector<float> f32(n + 1);
        std::vector<double> f64(n + 1);
        // Output at element offset 1 as well, so the float store is not 32-byte aligned.
        ASSERT_OK(decode_to_f32(t, src, std::span<float>(f32).subspan(1, n))) << dtype_name(t);
        ASSERT_OK(decode_to_f64(t, src, std::span<double>(f64).subspan(1, n))) << dtype_name(t);
        for (std::size_t i = 0; i < n; ++i) {
          const double want = scalar_decode(t, src.data(), i);
          ASSERT_TRUE(same_bits_or_nan(f64[i + 1], want)) << dtype_name(t) << " n=" << n << " i=" << i;
          ASSERT_TRUE(same_bits_or_nan(f32[i + 1], static_cast<float>(want)))
              << dtype_name(t) << " n=" << n << " i=" << i;
        }
      }
    }
  }
}

// The scalar encoder for one element of a float target of 8 bits or fewer.
std::uint8_t scalar_encode_small(dtype t, float x, bool saturate) {
  switch (t) {
    case dtype::F8_E4M3: return f32_to_f8_e4m3(x, saturate);
    case dtype::F8_E5M2: return f32_to_f8_e5m2(x, saturate);
    case dtype::F8_E4M3FNUZ: return f32_to_f8_e4m3fnuz(x, saturate);
    case dtype::F8_E5M2FNUZ: return f32_to_f8_e5m2fnuz(x, saturate);
    case dtype::F8_E8M0: return f32_to_f8_e8m0(x);
    case dtype::F4: return f32_to_f4(x);
    case dtype::F6_E2M3: return f32_to_f6_e2m3(x);
    case dtype::F6_E3M2: return f32_to_f6_e3m2(x);
    default: return 0;
  }
}

TEST(ConvertBulk, FloatEncodeMatchesScalar) {
  for (dtype t : all_dtypes()) {
    if (!dtype_is_float(t) || t == dtype::C64) continue;
    const bool sub_byte = dtype_is_sub_byte(t);
    for (std::size_t n : lengths_for(t)) {
      for (bool saturate : {false, true}) {
        const auto buffer = random_floats(n + 1, static_cast<std::uint32_t>(n + (saturate ? 7 : 0)), !sub_byte);
        const std::span<const float> src(buffer.data() + 1, n);  // not 32-byte aligned
        const std::size_t bytes = byte_size(t, n).bytes;
        std::vector<std::byte> out(bytes + 1);
        encode_options opt;
        opt.saturate = saturate;
        ASSERT_OK(encode_from_f32(t, src, std::span<std::byte>(out).subspan(1, bytes), opt)) << dtype_name(t);
        const std::byte* got = out.data() + 1;
        for (std::size_t i = 0; i < n; ++i) {
          const float x = src[i];
          if (t == dtype::BF16) {
            ASSERT_EQ(load<std::uint16_t>(got + 2 * i), f32_to_bf16(x)) << i;
          } else if (t == dtype::F16) {
            ASSERT_EQ(load<std::uint16_t>(got + 2 * i), f32_to_f16(x)) << std::hexfloat << x;
          } else if (t == dtype::F32) {
            ASSERT_EQ(load<std::uint32_t>(got + 4 * i), std::bit_cast<std::uint32_t>(x));
          } else if (t == dtype::F64) {
            ASSERT_TRUE(same_bits_or_nan(load<double>(got + 8 * i), static_cast<double>(x)));
          } else {
            // Small floats: decoding our packed output must give the scalar code's value.
            const std::uint8_t code = scalar_encode_small(t, x, saturate);
            const double want = scalar_decode(t, std::array<std::byte, 1>{std::byte{code}}.data(), 0);
            if (!sub_byte) {
              ASSERT_EQ(std::to_integer<std::uint8_t>(got[i]), code) << dtype_name(t) << " " << x;
            } else {
              ASSERT_TRUE(same_bits_or_nan(scalar_decode(t, got, i), want)) << dtype_name(t) << " " << x << " i=" << i;
            }
          }
        }
      }
    }
  }
}

TEST(ConvertBulk, SubByteBitOrder) {
  // F4: element 0 in the low nibble: 1.0 is code 0x2, -6.0 is 0xF.
  std::vector<std::byte> f4(1);
  const std::vector<float> pair = {1.0F, -6.0F};
  ASSERT_OK(encode_from_f32(dtype::F4, pair, f4));
  EXPECT_EQ(f4[0], std::byte{0xF2});
  std::vector<float> back(2);
  ASSERT_OK(decode_to_f32(dtype::F4, f4, back));
  EXPECT_EQ(back, pair);

  // F6_E2M3 codes 1.0=0x08, 2.0=0x10, 3.0=0x14, 4.0=0x18 -> 24-bit LE word 0x614408.
  std::vector<std::byte> f6(3);
  const std::vector<float> four = {1.0F, 2.0F, 3.0F, 4.0F};
  ASSERT_OK(encode_from_f32(dtype::F6_E2M3, four, f6));
  EXPECT_EQ(f6[0], std::byte{0x08});
  EXPECT_EQ(f6[1], std::byte{0x44});
  EXPECT_EQ(f6[2], std::byte{0x61});
  std::vector<float> back4(4);
  ASSERT_OK(decode_to_f32(dtype::F6_E2M3, f6, back4));
  EXPECT_EQ(back4, four);
}

TEST(ConvertBulk, F16PortablePathMatchesScalar) {
  std::vector<std::byte> codes(2 * 0x10000);
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto v = static_cast<std::uint16_t>(c);
    std::memcpy(codes.data() + 2 * c, &v, 2);
  }
  std::vector<float> out(0x10000);
  detail::f16_to_f32_portable(codes.data(), out.data(), out.size());
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(out[c]),
              std::bit_cast<std::uint32_t>(f16_to_f32(static_cast<std::uint16_t>(c))))
        << c;
  }
}

template <class T>
std::vector<T> encode_ints(dtype t, const std::vector<float>& in) {
  std::vector<std::byte> raw(in.size() * sizeof(T));
  EXPECT_OK(encode_from_f32(t, in, raw));
  std::vector<T> out(in.size());
  std::memcpy(out.data(), raw.data(), raw.size());
  return out;
}

TEST(ConvertIntegers, UncheckedTruncatesAndClamps) {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  EXPECT_EQ(encode_ints<std::uint8_t>(dtype::U8, {0.0F, 2.9F, 255.9F, 300.0F, -5.0F, nan, -0.5F}),
            (std::vector<std::uint8_t>{0, 2, 255, 255, 0, 0, 0}));
  EXPECT_EQ(encode_ints<std::int8_t>(dtype::I8, {-2.9F, 127.5F, -128.9F, -200.0F, INFINITY}),
            (std::vector<std::int8_t>{-2, 127, -128, -128, 127}));
  EXPECT_EQ(encode_ints<std::int32_t>(dtype::I32, {-0x1p31F, 0x1p31F, 16777216.0F}),
            (std::vector<std::int32_t>{std::numeric_limits<std::int32_t>::min(),
                                       std::numeric_limits<std::int32_t>::max(), 16777216}));
  EXPECT_EQ(
      encode_ints<std::int64_t>(dtype::I64, {-0x1p63F, 0x1p63F, -INFINITY}),
      (std::vector<std::int64_t>{std::numeric_limits<std::int64_t>::min(), std::numeric_limits<std::int64_t>::max(),
                                 std::numeric_limits<std::int64_t>::min()}));
  EXPECT_EQ(encode_ints<std::uint64_t>(dtype::U64, {0x1p63F, 1e20F, -1.0F}),
            (std::vector<std::uint64_t>{std::uint64_t{1} << 63, std::numeric_limits<std::uint64_t>::max(), 0}));
  EXPECT_EQ(encode_ints<std::uint16_t>(dtype::U16, {65535.0F, 65536.0F}), (std::vector<std::uint16_t>{65535, 65535}));
  EXPECT_EQ(encode_ints<std::uint8_t>(dtype::BOOL, {0.0F, -0.0F, 0.5F, -3.0F, nan}),
            (std::vector<std::uint8_t>{0, 0, 1, 1, 1}));
}

TEST(ConvertIntegers, DecodeLikeStaticCast) {
  const std::vector<std::int8_t> i8 = {-128, -1, 0, 127};
  std::vector<float> out(4);
  ASSERT_OK(decode_to_f32(dtype::I8, std::as_bytes(std::span(i8)), out));
  EXPECT_EQ(out, (std::vector<float>{-128.0F, -1.0F, 0.0F, 127.0F}));
  const std::vector<std::uint64_t> u64 = {std::numeric_limits<std::uint64_t>::max(), (std::uint64_t{1} << 53) + 1};
  std::vector<double> d(2);
  ASSERT_OK(decode_to_f64(dtype::U64, std::as_bytes(std::span(u64)), d));
  EXPECT_EQ(d[0], 0x1p64);
  EXPECT_EQ(d[1], 0x1p53);  // beyond 2^53: rounds to nearest even
  const std::vector<std::uint8_t> flags = {0, 1, 2, 255};
  ASSERT_OK(decode_to_f32(dtype::BOOL, std::as_bytes(std::span(flags)), out));
  EXPECT_EQ(out, (std::vector<float>{0.0F, 1.0F, 1.0F, 1.0F}));
}

status encode_checked(dtype t, const std::vector<float>& in) {
  std::vector<std::byte> raw(byte_size(t, in.size()).bytes);
  encode_options opt;
  opt.check_range = true;
  return encode_from_f32(t, in, raw, opt);
}

TEST(ConvertIntegers, CheckedReportsFirstBadElement) {
  EXPECT_OK(encode_checked(dtype::U8, {0.0F, 255.9F, -0.9F}));
  EXPECT_OK(encode_checked(dtype::I8, {-128.9F, 127.9F}));
  EXPECT_OK(encode_checked(dtype::I32, {-0x1p31F, 0x1.FFFFFEp30F}));
  EXPECT_OK(encode_checked(dtype::U64, {0x1.FFFFFEp63F}));
  EXPECT_OK(encode_checked(dtype::BOOL, {0.0F, 1.0F, -0.0F}));

  const auto u8 = encode_checked(dtype::U8, {1.0F, 256.0F, -7.0F});
  ASSERT_ERROR(u8, error_code::invalid_argument);
  EXPECT_EQ(u8.err().message, "cannot encode element 1 (value 256) as U8: out of range");

  const struct {
    dtype t;
    float bad;
  } cases[] = {{dtype::U8, -1.0F},     {dtype::I8, 128.0F},   {dtype::I8, -129.0F},    {dtype::I16, 32768.0F},
               {dtype::U16, 65536.0F}, {dtype::I32, 0x1p31F}, {dtype::U32, 0x1p32F},   {dtype::I64, 0x1p63F},
               {dtype::U64, 0x1p64F},  {dtype::U32, NAN},     {dtype::I64, -INFINITY}, {dtype::BOOL, 0.5F},
               {dtype::BOOL, NAN}};
  for (const auto& c : cases) {
    const auto st = encode_checked(c.t, {0.0F, 0.0F, c.bad});
    ASSERT_FALSE(st.ok()) << dtype_name(c.t) << " " << c.bad;
    EXPECT_NE(st.err().message.find("element 2"), std::string::npos) << st.err().message;
  }
}

TEST(ConvertErrors, ComplexIsRejected) {
  std::vector<std::byte> raw(8);
  std::vector<float> out(1);
  const auto d = decode_to_f32(dtype::C64, raw, out);
  ASSERT_ERROR(d, error_code::invalid_argument);
  EXPECT_NE(d.err().message.find("complex"), std::string::npos);
  std::vector<double> out64(1);
  EXPECT_FALSE(decode_to_f64(dtype::C64, raw, out64).ok());
  EXPECT_FALSE(encode_from_f32(dtype::C64, out, raw).ok());
}

TEST(ConvertErrors, SizeMismatch) {
  std::vector<std::byte> raw(3);
  std::vector<float> one(1), two(2);
  const auto d = decode_to_f32(dtype::BF16, raw, one);
  ASSERT_ERROR(d, error_code::invalid_argument);
  EXPECT_EQ(d.err().message, "cannot decode 1 elements of BF16: buffer has 3 bytes, expected 2");
  const auto f4 = decode_to_f32(dtype::F4, std::span(raw).first(1), one);
  ASSERT_FALSE(f4.ok());
  EXPECT_EQ(f4.err().message, "cannot decode 1 elements of F4: they do not fill whole bytes");
  std::vector<float> three(3);
  EXPECT_FALSE(encode_from_f32(dtype::F6_E3M2, three, raw).ok());
  EXPECT_FALSE(encode_from_f32(dtype::U16, two, raw).ok());
  EXPECT_OK(encode_from_f32(dtype::F4, std::span<const float>{}, std::span<std::byte>{}));
}

TEST(ConvertErrors, NaNIntoFormatWithoutNaN) {
  for (dtype t : {dtype::F4, dtype::F6_E2M3, dtype::F6_E3M2}) {
    std::vector<float> in = {1.0F, 2.0F, 3.0F, NAN};
    std::vector<std::byte> raw(byte_size(t, in.size()).bytes, std::byte{0xAB});
    const auto st = encode_from_f32(t, in, raw);
    ASSERT_ERROR(st, error_code::invalid_argument);
    EXPECT_EQ(st.err().message,
              "cannot encode element 3 (value nan) as " + std::string(dtype_name(t)) + ": it has no NaN");
    for (std::byte b : raw) EXPECT_EQ(b, std::byte{0xAB});  // nothing written
  }
}

TEST(ConvertBulk, SaturateOption) {
  const std::vector<float> in = {1000.0F, -INFINITY, NAN};
  std::vector<std::byte> raw(3);
  ASSERT_OK(encode_from_f32(dtype::F8_E4M3, in, raw));
  EXPECT_EQ(raw, (std::vector<std::byte>{std::byte{0x7F}, std::byte{0xFF}, std::byte{0x7F}}));
  encode_options opt;
  opt.saturate = true;
  ASSERT_OK(encode_from_f32(dtype::F8_E4M3, in, raw, opt));
  EXPECT_EQ(raw, (std::vector<std::byte>{std::byte{0x7E}, std::byte{0xFE}, std::byte{0x7F}}));
}

}  // namespace
}  // namespace safetensors
