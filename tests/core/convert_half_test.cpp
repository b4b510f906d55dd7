// SPDX-License-Identifier: Apache-2.0
// BF16 and F16 codecs (convert.h and the bulk kernels): every code decoded against a
// formula, every code round-tripped, rounding checked against nearbyint() in double,
// F16 cross-checked with the compiler's _Float16, and F16C against the portable path.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <utility>
#include <vector>

#include "convert/kernels.h"
#include "safetensors/convert.h"

namespace safetensors {
namespace {

// (-1)^s * 2^(e - bias) * 1.m, or 2^(1 - bias) * 0.m for e == 0; top exponent Inf/NaN.
double half_formula(std::uint16_t c, int exp_bits, int mant_bits) {
  const int bias = (1 << (exp_bits - 1)) - 1;
  const bool neg = (c >> 15) != 0;
  const unsigned e = (static_cast<unsigned>(c) >> mant_bits) & ((1U << exp_bits) - 1);
  const unsigned m = c & ((1U << mant_bits) - 1);
  double v = 0;
  if (e == (1U << exp_bits) - 1) {
    v = m == 0 ? INFINITY : std::numeric_limits<double>::quiet_NaN();
  } else {
    const double frac = static_cast<double>(m) / static_cast<double>(1U << mant_bits);
    v = e == 0 ? std::ldexp(frac, 1 - bias) : std::ldexp(1.0 + frac, static_cast<int>(e) - bias);
  }
  return neg ? -v : v;
}

// x rounded (ties to even, via nearbyint in the default mode) to `mant_bits` fraction
// bits with the given minimum normal exponent; Inf past the largest finite value.
double round_reference(float x, int mant_bits, int min_exp, double max_finite) {
  const auto d = static_cast<double>(x);
  if (d == 0 || std::isinf(d)) return d;
  const int e = std::max(std::ilogb(d), min_exp);
  const double q = std::ldexp(1.0, e - mant_bits);
  const double r = std::nearbyint(d / q) * q;
  if (std::fabs(r) > max_finite) return std::copysign(INFINITY, d);
  return r == 0 ? std::copysign(0.0, d) : r;
}

bool same_value(double a, double b) {
  if (std::isnan(a) || std::isnan(b)) return std::isnan(a) && std::isnan(b);
  return a == b && std::signbit(a) == std::signbit(b);
}

std::uint16_t load_code(const std::vector<std::byte>& bytes, std::size_t i) {
  std::uint16_t v = 0;
  std::memcpy(&v, bytes.data() + 2 * i, 2);
  return v;
}

// Floats spread over every exponent (a stride through the bit patterns) plus the
// midpoints between consecutive 16-bit values and their float neighbours.
std::vector<float> sweep_inputs(float (*decode)(std::uint16_t)) {
  std::vector<float> out;
  for (std::uint64_t u = 0; u <= 0xFFFFFFFFULL; u += 4099)
    out.push_back(std::bit_cast<float>(static_cast<std::uint32_t>(u)));
  for (std::uint32_t c = 0; c < 0x7FFF; ++c) {
    const double a = static_cast<double>(decode(static_cast<std::uint16_t>(c)));
    const double b = static_cast<double>(decode(static_cast<std::uint16_t>(c + 1)));
    if (std::isnan(a) || std::isnan(b) || std::isinf(b)) continue;
    const auto mid = static_cast<float>((a + b) / 2);  // exact: the 16-bit formats have spare float bits
    for (float s : {mid, -mid}) {
      out.push_back(s);
      out.push_back(std::nextafter(s, INFINITY));
      out.push_back(std::nextafter(s, -INFINITY));
    }
  }
  return out;
}

TEST(HalfDecode, Bf16EveryCode) {
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto code = static_cast<std::uint16_t>(c);
    ASSERT_TRUE(same_value(bf16_to_f32(code), half_formula(code, 8, 7))) << c;
  }
  EXPECT_EQ(bf16_to_f32(0x3F80), 1.0F);
  EXPECT_EQ(bf16_to_f32(0x7F7F), 0x1.FEp127F);
  EXPECT_EQ(bf16_to_f32(0x0001), 0x1p-133F);
}

TEST(HalfDecode, F16EveryCode) {
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto code = static_cast<std::uint16_t>(c);
    ASSERT_TRUE(same_value(f16_to_f32(code), half_formula(code, 5, 10))) << c;
  }
  EXPECT_EQ(f16_to_f32(0x7BFF), 65504.0F);
  EXPECT_EQ(f16_to_f32(0x0001), 0x1p-24F);
  EXPECT_EQ(f16_to_f32(0x0400), 0x1p-14F);
  EXPECT_EQ(f16_to_f32(0xFC00), -INFINITY);
}

TEST(HalfEncode, EveryCodeRoundTrips) {
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto code = static_cast<std::uint16_t>(c);
    const float b = bf16_to_f32(code);
    const float h = f16_to_f32(code);
    if (std::isnan(b)) {
      const std::uint16_t back = f32_to_bf16(b);
      EXPECT_TRUE(std::isnan(bf16_to_f32(back)) && (back >> 15) == (code >> 15)) << c;
    } else {
      EXPECT_EQ(f32_to_bf16(b), code) << c;
    }
    if (std::isnan(h)) {
      const std::uint16_t back = f32_to_f16(h);
      EXPECT_TRUE(std::isnan(f16_to_f32(back)) && (back >> 15) == (code >> 15)) << c;
    } else {
      EXPECT_EQ(f32_to_f16(h), code) << c;
    }
  }
}

TEST(HalfEncode, TiesOverflowAndSubnormals) {
  EXPECT_EQ(f32_to_bf16(1.0F + 0x1p-8F), 0x3F80);  // tie between 0x3F80 and 0x3F81 -> even
  EXPECT_EQ(f32_to_bf16(1.0F + 0x3p-8F), 0x3F82);  // tie between 0x3F81 and 0x3F82 -> even
  EXPECT_EQ(f32_to_bf16(0x1.FFp127F), 0x7F80);     // rounds past the largest: Inf
  EXPECT_EQ(f32_to_bf16(-INFINITY), 0xFF80);
  EXPECT_EQ(f32_to_bf16(-0.0F), 0x8000);
  EXPECT_EQ(f32_to_bf16(std::bit_cast<float>(0x7F800001U)), 0x7FC0);  // signalling NaN becomes quiet
  EXPECT_EQ(f32_to_f16(1.0F + 0x1p-11F), 0x3C00);
  EXPECT_EQ(f32_to_f16(1.0F + 0x3p-11F), 0x3C02);
  EXPECT_EQ(f32_to_f16(65519.0F), 0x7BFF);
  EXPECT_EQ(f32_to_f16(65520.0F), 0x7C00);  // tie with the odd 65504 -> Inf
  EXPECT_EQ(f32_to_f16(0x1p-25F), 0x0000);  // half the smallest subnormal -> 0 (even)
  EXPECT_EQ(f32_to_f16(0x3p-25F), 0x0002);
  EXPECT_EQ(f32_to_f16(-0x1p-26F), 0x8000);
  EXPECT_EQ(f32_to_f16(0x1.FFCp-15F), 0x0400);  // largest subnormal + half step -> smallest normal
  EXPECT_EQ(f32_to_f16(-NAN) & 0xFE00, 0xFE00);
}

TEST(HalfEncode, Bf16MatchesNearbyint) {
  int failures = 0;
  for (float x : sweep_inputs(bf16_to_f32)) {
    if (std::isnan(x)) continue;
    const double want = round_reference(x, 7, -126, 0x1.FEp127);
    if (!same_value(bf16_to_f32(f32_to_bf16(x)), want) && ++failures <= 10) ADD_FAILURE() << std::hexfloat << x;
  }
  EXPECT_EQ(failures, 0);
}

TEST(HalfEncode, F16MatchesNearbyint) {
  int failures = 0;
  for (float x : sweep_inputs(f16_to_f32)) {
    if (std::isnan(x)) continue;
    const double want = round_reference(x, 10, -14, 65504.0);
    if (!same_value(f16_to_f32(f32_to_f16(x)), want) && ++failures <= 10) ADD_FAILURE() << std::hexfloat << x;
  }
  EXPECT_EQ(failures, 0);
}

#ifdef __FLT16_MAX__
// The compiler's own binary16 (g++ on x86-64) must agree bit for bit, NaN payloads aside.
TEST(HalfEncode, F16MatchesCompilerFloat16) {
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto code = static_cast<std::uint16_t>(c);
    const auto native = static_cast<float>(std::bit_cast<_Float16>(code));
    ASSERT_TRUE(same_value(f16_to_f32(code), native)) << c;
  }
  int failures = 0;
  for (float x : sweep_inputs(f16_to_f32)) {
    const auto native = std::bit_cast<std::uint16_t>(static_cast<_Float16>(x));
    const std::uint16_t ours = f32_to_f16(x);
    const bool ok = std::isnan(x) ? (ours & 0x7E00) == 0x7E00 && (native & 0x7C00) == 0x7C00 : ours == native;
    if (!ok && ++failures <= 10) ADD_FAILURE() << std::hexfloat << x << ": " << ours << " vs " << native;
  }
  EXPECT_EQ(failures, 0);
}
#endif

// The F16C path (when the CPU has it) and the portable path give identical bits.
TEST(HalfBulk, F16cMatchesPortable) {
  if (!detail::has_f16c()) GTEST_SKIP() << "no F16C on this CPU";
  std::vector<std::byte> codes(2 * 0x10000 + 2);
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    const auto v = static_cast<std::uint16_t>(c);
    std::memcpy(codes.data() + 1 + 2 * c, &v, 2);  // odd address: unaligned input
  }
  std::vector<float> fast(0x10000), slow(0x10000);
  detail::f16_to_f32_f16c(codes.data() + 1, fast.data(), fast.size());
  detail::f16_to_f32_portable(codes.data() + 1, slow.data(), slow.size());
  for (std::uint32_t c = 0; c < 0x10000; ++c) {
    ASSERT_EQ(std::bit_cast<std::uint32_t>(fast[c]), std::bit_cast<std::uint32_t>(slow[c])) << "code " << c;
  }

  std::vector<float> inputs = sweep_inputs(f16_to_f32);
  inputs.push_back(std::bit_cast<float>(0x7F800001U));  // signalling NaN
  inputs.push_back(std::bit_cast<float>(0xFFC12345U));  // negative NaN with payload
  std::vector<std::byte> out_fast(2 * inputs.size()), out_slow(2 * inputs.size());
  detail::f32_to_f16_f16c(inputs.data(), out_fast.data(), inputs.size());
  detail::f32_to_f16_portable(inputs.data(), out_slow.data(), inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    ASSERT_EQ(std::memcmp(out_fast.data() + 2 * i, out_slow.data() + 2 * i, 2), 0)
        << std::hexfloat << inputs[i] << " at " << i;
  }
}

// Every BF16 path (portable, AVX2, AVX-512; the ones this CPU has) gives the scalar bits.
TEST(HalfBulk, Bf16PathsMatchScalar) {
  std::vector<float> inputs = sweep_inputs(bf16_to_f32);
  for (std::uint32_t payload : {0x7F800001U, 0xFFC12345U, 0x7FFFFFFFU, 0xFF800000U, 0x00000001U, 0x807FFFFFU}) {
    inputs.push_back(std::bit_cast<float>(payload));
  }
  std::vector<std::byte> want(2 * inputs.size());
  for (std::size_t i = 0; i < inputs.size(); ++i) {
    const std::uint16_t b = f32_to_bf16(inputs[i]);
    std::memcpy(want.data() + 2 * i, &b, 2);
  }
  using kernel = void (*)(const float*, std::byte*, std::size_t) noexcept;
  std::vector<std::pair<const char*, kernel>> paths = {{"dispatch", detail::f32_to_bf16}};
  if (detail::has_avx2()) paths.emplace_back("avx2", detail::f32_to_bf16_avx2);
  if (detail::has_avx512()) paths.emplace_back("avx512", detail::f32_to_bf16_avx512);
  if (detail::has_avx512_bf16()) paths.emplace_back("avx512bf16", detail::f32_to_bf16_avx512bf16);
  for (const auto& [name, fn] : paths) {
    std::vector<std::byte> got(want.size());
    fn(inputs.data(), got.data(), inputs.size());
    for (std::size_t i = 0; i < inputs.size(); ++i) {
      ASSERT_EQ(std::memcmp(got.data() + 2 * i, want.data() + 2 * i, 2), 0)
          << name << " " << std::hexfloat << inputs[i];
    }
  }
  if (detail::has_avx2()) {
    std::vector<float> a(inputs.size()), b(inputs.size());
    detail::bf16_to_f32_avx2(want.data(), a.data(), a.size());
    detail::bf16_to_f32(want.data(), b.data(), b.size());
    for (std::size_t i = 0; i < a.size(); ++i) {
      ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(b[i])) << i;
      ASSERT_EQ(std::bit_cast<std::uint32_t>(a[i]), std::bit_cast<std::uint32_t>(bf16_to_f32(load_code(want, i)))) << i;
    }
  }
}

}  // namespace
}  // namespace safetensors
