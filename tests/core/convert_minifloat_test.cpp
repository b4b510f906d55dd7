// SPDX-License-Identifier: Apache-2.0
// Scalar codecs of the 8-, 6- and 4-bit floats (minifloat.h): every code decoded and
// compared with a textbook formula, every code round-tripped, and the encoder checked
// against a brute-force nearest-code search on midpoints, neighbours and random floats.
#include <gtest/gtest.h>

#include <bit>
#include <cmath>
#include <cstdint>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include "safetensors/minifloat.h"

namespace safetensors {
namespace {

// The formats as the documentation describes them, written independently of the library.
enum class special { ieee, fn, fnuz, finite };

struct format_spec {
  std::string name;
  int exp_bits;
  int mant_bits;
  int bias;
  special rule;
  float (*decode)(std::uint8_t);
  std::uint8_t (*encode)(float, bool);
};

std::uint8_t enc_e4m3(float x, bool sat) { return f32_to_f8_e4m3(x, sat); }
std::uint8_t enc_e5m2(float x, bool sat) { return f32_to_f8_e5m2(x, sat); }
std::uint8_t enc_e4m3fnuz(float x, bool sat) { return f32_to_f8_e4m3fnuz(x, sat); }
std::uint8_t enc_e5m2fnuz(float x, bool sat) { return f32_to_f8_e5m2fnuz(x, sat); }
std::uint8_t enc_e2m3(float x, bool) { return f32_to_f6_e2m3(x); }
std::uint8_t enc_e3m2(float x, bool) { return f32_to_f6_e3m2(x); }
std::uint8_t enc_f4(float x, bool) { return f32_to_f4(x); }
float dec_e4m3(std::uint8_t c) { return f8_e4m3_to_f32(c); }
float dec_e5m2(std::uint8_t c) { return f8_e5m2_to_f32(c); }
float dec_e4m3fnuz(std::uint8_t c) { return f8_e4m3fnuz_to_f32(c); }
float dec_e5m2fnuz(std::uint8_t c) { return f8_e5m2fnuz_to_f32(c); }
float dec_e2m3(std::uint8_t c) { return f6_e2m3_to_f32(c); }
float dec_e3m2(std::uint8_t c) { return f6_e3m2_to_f32(c); }
float dec_f4(std::uint8_t c) { return f4_to_f32(c); }

const std::vector<format_spec>& formats() {
  static const std::vector<format_spec> all = {
      {"F8_E4M3", 4, 3, 7, special::fn, dec_e4m3, enc_e4m3},
      {"F8_E5M2", 5, 2, 15, special::ieee, dec_e5m2, enc_e5m2},
      {"F8_E4M3FNUZ", 4, 3, 8, special::fnuz, dec_e4m3fnuz, enc_e4m3fnuz},
      {"F8_E5M2FNUZ", 5, 2, 16, special::fnuz, dec_e5m2fnuz, enc_e5m2fnuz},
      {"F6_E2M3", 2, 3, 1, special::finite, dec_e2m3, enc_e2m3},
      {"F6_E3M2", 3, 2, 3, special::finite, dec_e3m2, enc_e3m2},
      {"F4", 2, 1, 1, special::finite, dec_f4, enc_f4},
  };
  return all;
}

int width(const format_spec& f) { return 1 + f.exp_bits + f.mant_bits; }
unsigned code_count(const format_spec& f) { return 1U << width(f); }
unsigned sign_bit(const format_spec& f) { return 1U << (width(f) - 1); }

bool is_nan_code(const format_spec& f, unsigned c) {
  const unsigned mag = c & (sign_bit(f) - 1);
  const unsigned exp_all = ((1U << f.exp_bits) - 1) << f.mant_bits;
  switch (f.rule) {
    case special::ieee: return (mag & exp_all) == exp_all && (mag & ((1U << f.mant_bits) - 1)) != 0;
    case special::fn: return mag == sign_bit(f) - 1;
    case special::fnuz: return c == sign_bit(f);
    case special::finite: return false;
  }
  return false;
}

bool is_inf_code(const format_spec& f, unsigned c) {
  const unsigned exp_all = ((1U << f.exp_bits) - 1) << f.mant_bits;
  return f.rule == special::ieee && (c & (sign_bit(f) - 1)) == exp_all;
}

// Textbook value: (-1)^s * 2^(e - bias) * (1 + m / 2^M), or 2^(1 - bias) * m / 2^M when e == 0.
double formula(const format_spec& f, unsigned c) {
  if (is_nan_code(f, c)) return std::numeric_limits<double>::quiet_NaN();
  const bool neg = (c & sign_bit(f)) != 0;
  if (is_inf_code(f, c)) return neg ? -INFINITY : INFINITY;
  const unsigned e = (c >> f.mant_bits) & ((1U << f.exp_bits) - 1);
  const unsigned m = c & ((1U << f.mant_bits) - 1);
  const double frac = static_cast<double>(m) / static_cast<double>(1U << f.mant_bits);
  const double v = e == 0 ? std::ldexp(frac, 1 - f.bias) : std::ldexp(1.0 + frac, static_cast<int>(e) - f.bias);
  return neg ? -v : v;
}

TEST(MinifloatDecode, EveryCodeMatchesFormula) {
  for (const auto& f : formats()) {
    for (unsigned c = 0; c < code_count(f); ++c) {
      const float got = f.decode(static_cast<std::uint8_t>(c));
      const double want = formula(f, c);
      if (std::isnan(want)) {
        EXPECT_TRUE(std::isnan(got)) << f.name << " code " << c;
      } else {
        EXPECT_EQ(static_cast<double>(got), want) << f.name << " code " << c;
        EXPECT_EQ(std::signbit(got), std::signbit(want)) << f.name << " code " << c;
      }
    }
  }
}

TEST(MinifloatDecode, KnownValues) {
  EXPECT_EQ(f8_e4m3_to_f32(0x7E), 448.0F);
  EXPECT_EQ(f8_e4m3_to_f32(0xFE), -448.0F);
  EXPECT_TRUE(std::isnan(f8_e4m3_to_f32(0x7F)));
  EXPECT_TRUE(std::isnan(f8_e4m3_to_f32(0xFF)));
  EXPECT_EQ(f8_e4m3_to_f32(0x78), 256.0F);  // S.1111.000 is a number in the fn format
  EXPECT_EQ(f8_e4m3_to_f32(0x01), 0x1p-9F);
  EXPECT_EQ(f8_e4m3_to_f32(0x08), 0x1p-6F);
  EXPECT_EQ(f8_e4m3_to_f32(0x38), 1.0F);
  EXPECT_TRUE(std::signbit(f8_e4m3_to_f32(0x80)));

  EXPECT_EQ(f8_e5m2_to_f32(0x7B), 57344.0F);
  EXPECT_EQ(f8_e5m2_to_f32(0x7C), INFINITY);
  EXPECT_EQ(f8_e5m2_to_f32(0xFC), -INFINITY);
  EXPECT_TRUE(std::isnan(f8_e5m2_to_f32(0x7D)));
  EXPECT_TRUE(std::isnan(f8_e5m2_to_f32(0xFF)));
  EXPECT_EQ(f8_e5m2_to_f32(0x01), 0x1p-16F);
  EXPECT_EQ(f8_e5m2_to_f32(0x3C), 1.0F);

  EXPECT_EQ(f8_e4m3fnuz_to_f32(0x7F), 240.0F);
  EXPECT_EQ(f8_e4m3fnuz_to_f32(0xFF), -240.0F);
  EXPECT_TRUE(std::isnan(f8_e4m3fnuz_to_f32(0x80)));
  EXPECT_EQ(f8_e4m3fnuz_to_f32(0x01), 0x1p-10F);
  EXPECT_EQ(f8_e4m3fnuz_to_f32(0x40), 1.0F);

  EXPECT_EQ(f8_e5m2fnuz_to_f32(0x7F), 57344.0F);
  EXPECT_TRUE(std::isnan(f8_e5m2fnuz_to_f32(0x80)));
  EXPECT_EQ(f8_e5m2fnuz_to_f32(0x01), 0x1p-17F);
  EXPECT_EQ(f8_e5m2fnuz_to_f32(0x40), 1.0F);

  EXPECT_EQ(f6_e2m3_to_f32(0x1F), 7.5F);
  EXPECT_EQ(f6_e2m3_to_f32(0x3F), -7.5F);
  EXPECT_EQ(f6_e2m3_to_f32(0x01), 0.125F);
  EXPECT_EQ(f6_e3m2_to_f32(0x1F), 28.0F);
  EXPECT_EQ(f6_e3m2_to_f32(0x01), 0.0625F);

  const float f4_values[8] = {0.0F, 0.5F, 1.0F, 1.5F, 2.0F, 3.0F, 4.0F, 6.0F};
  for (unsigned c = 0; c < 8; ++c) {
    EXPECT_EQ(f4_to_f32(static_cast<std::uint8_t>(c)), f4_values[c]);
    EXPECT_EQ(f4_to_f32(static_cast<std::uint8_t>(c | 8)), -f4_values[c]);
  }
  EXPECT_TRUE(std::signbit(f4_to_f32(0x8)));
}

TEST(MinifloatDecode, E8M0EveryCode) {
  for (unsigned c = 0; c < 255; ++c) {
    EXPECT_EQ(static_cast<double>(f8_e8m0_to_f32(static_cast<std::uint8_t>(c))),
              std::ldexp(1.0, static_cast<int>(c) - 127))
        << c;
  }
  EXPECT_TRUE(std::isnan(f8_e8m0_to_f32(0xFF)));
  EXPECT_EQ(f8_e8m0_to_f32(127), 1.0F);
  EXPECT_EQ(f8_e8m0_to_f32(254), 0x1p127F);
}

TEST(MinifloatEncode, EveryCodeRoundTrips) {
  for (const auto& f : formats()) {
    for (unsigned c = 0; c < code_count(f); ++c) {
      const float v = f.decode(static_cast<std::uint8_t>(c));
      const std::uint8_t back = f.encode(v, false);
      if (is_nan_code(f, c)) {
        EXPECT_TRUE(f.rule == special::finite || is_nan_code(f, back)) << f.name << " code " << c;
      } else {
        EXPECT_EQ(back, c) << f.name << " code " << c;
        // Saturating turns an Inf code into the largest finite one just below it.
        const unsigned want_saturated = is_inf_code(f, c) ? c - 1 : c;
        EXPECT_EQ(f.encode(v, true), want_saturated) << f.name << " code " << c << " (saturating)";
      }
    }
  }
  for (unsigned c = 0; c < 255; ++c) {
    EXPECT_EQ(f32_to_f8_e8m0(f8_e8m0_to_f32(static_cast<std::uint8_t>(c))), c);
  }
}

// Positive finite codes sorted by value (codes are monotonic in value for these formats),
// with their values by the formula: computed once per format, not once per probed input.
struct positive_codes {
  std::vector<unsigned> codes;
  std::vector<double> values;

  explicit positive_codes(const format_spec& f) {
    for (unsigned c = 0; c < sign_bit(f); ++c) {
      if (!is_nan_code(f, c) && !is_inf_code(f, c)) {
        codes.push_back(c);
        values.push_back(formula(f, c));
      }
    }
  }
};

// What the format's rules say x must encode to: the nearest finite code (ties to the
// even code); beyond the largest code, an "overflow" code one step above competes too.
unsigned reference_encode(const format_spec& f, const positive_codes& positive, float x, bool saturate) {
  const unsigned sign = std::signbit(x) ? sign_bit(f) : 0;
  if (std::isnan(x)) {
    if (f.rule == special::finite) return 0;
    if (f.rule == special::fnuz) return sign_bit(f);
    return sign | (sign_bit(f) - 1);
  }
  const std::vector<unsigned>& codes = positive.codes;
  const std::vector<double>& values = positive.values;
  const unsigned max_code = codes.back();
  const double max_value = values.back();
  const double over_value = max_value + (max_value - values[values.size() - 2]);
  const double a = std::fabs(static_cast<double>(x));
  unsigned best = 0;
  double best_dist = INFINITY;
  bool overflow = false;
  for (std::size_t i = 0; i < codes.size(); ++i) {
    const unsigned c = codes[i];
    const double d = std::fabs(a - values[i]);
    if (d < best_dist || (d == best_dist && c % 2 == 0)) {
      best = c;
      best_dist = d;
    }
  }
  const double d_over = std::fabs(a - over_value);
  if (a >= over_value || d_over < best_dist || (d_over == best_dist && (max_code + 1) % 2 == 0)) overflow = true;
  if (overflow) {
    if (saturate || f.rule == special::finite) return sign | max_code;
    if (f.rule == special::ieee) return sign | (((1U << f.exp_bits) - 1) << f.mant_bits);
    if (f.rule == special::fn) return sign | (sign_bit(f) - 1);
    return sign_bit(f);  // fnuz NaN
  }
  if (f.rule == special::fnuz && best == 0) return 0;
  return sign | best;
}

// Inputs that probe every rounding decision: each value, each midpoint between neighbours
// (including the one above the largest), one float ulp either side, zeros, Inf, NaN.
std::vector<float> probe_inputs(const format_spec& f) {
  std::vector<double> points = positive_codes(f).values;
  const double max_value = points.back();
  points.push_back(max_value + (max_value - points[points.size() - 2]));
  const std::size_t n = points.size();
  for (std::size_t i = 0; i + 1 < n; ++i) points.push_back((points[i] + points[i + 1]) / 2);
  std::vector<float> out;
  for (double p : points) {
    const auto v = static_cast<float>(p);
    for (float s : {v, -v}) {
      out.push_back(s);
      out.push_back(std::nextafter(s, INFINITY));
      out.push_back(std::nextafter(s, -INFINITY));
    }
  }
  for (float s : {0.0F, -0.0F, INFINITY, -INFINITY, 1e30F, -1e30F, 1e-30F, -1e-30F, 0x1p-149F, -0x1p-149F,
                  std::numeric_limits<float>::max(), std::numeric_limits<float>::quiet_NaN(),
                  -std::numeric_limits<float>::quiet_NaN(), std::bit_cast<float>(0x7F800001U)}) {
    out.push_back(s);
  }
  std::mt19937 rng(1234);
  std::uniform_real_distribution<double> mant(-1.0, 1.0);
  std::uniform_int_distribution<int> expo(-f.bias - f.mant_bits - 3, 1 << f.exp_bits);
  for (int i = 0; i < 20000; ++i) out.push_back(static_cast<float>(std::ldexp(mant(rng), expo(rng))));
  return out;
}

TEST(MinifloatEncode, MatchesBruteForceNearest) {
  for (const auto& f : formats()) {
    const positive_codes positive(f);
    for (bool saturate : {false, true}) {
      int failures = 0;
      for (float x : probe_inputs(f)) {
        const unsigned want = reference_encode(f, positive, x, saturate);
        const unsigned got = f.encode(x, saturate);
        if (got != want && ++failures <= 10) {
          ADD_FAILURE() << f.name << (saturate ? " saturating" : "") << " x=" << x << " (" << std::hexfloat << x
                        << std::defaultfloat << "): got " << got << ", want " << want;
        }
      }
      EXPECT_EQ(failures, 0) << f.name;
    }
  }
}

TEST(MinifloatEncode, TiesGoToEven) {
  // E4M3: 1.0 (0x38) and 1.125 (0x39): midpoint goes to the even 0x38; 1.125..1.25 goes to 0x3A.
  EXPECT_EQ(f32_to_f8_e4m3(1.0625F), 0x38);
  EXPECT_EQ(f32_to_f8_e4m3(1.1875F), 0x3A);
  EXPECT_EQ(f32_to_f8_e4m3(std::nextafter(1.0625F, 2.0F)), 0x39);
  // Subnormal tie: half the smallest subnormal rounds to zero, 1.5 of it to 2 (even).
  EXPECT_EQ(f32_to_f8_e4m3(0x1p-10F), 0x00);
  EXPECT_EQ(f32_to_f8_e4m3(-0x1p-10F), 0x80);
  EXPECT_EQ(f32_to_f8_e4m3(0x1.8p-9F), 0x02);
  // E5M2: 1.0 (0x3C) and 1.25 (0x3D).
  EXPECT_EQ(f32_to_f8_e5m2(1.125F), 0x3C);
  EXPECT_EQ(f32_to_f8_e5m2(1.375F), 0x3E);
  // F4: 2.5 is between 2 (0x4) and 3 (0x5) -> 2; 5 is between 4 (0x6) and 6 (0x7) -> 4.
  EXPECT_EQ(f32_to_f4(2.5F), 0x4);
  EXPECT_EQ(f32_to_f4(5.0F), 0x6);
  EXPECT_EQ(f32_to_f4(0.25F), 0x0);
  EXPECT_EQ(f32_to_f4(0.75F), 0x2);
  EXPECT_EQ(f32_to_f4(-1.25F), 0xA);
  // F6_E2M3 steps of 0.125 below 2: 0.0625 -> 0, 0.1875 -> 0.25.
  EXPECT_EQ(f32_to_f6_e2m3(0.0625F), 0x00);
  EXPECT_EQ(f32_to_f6_e2m3(0.1875F), 0x02);
}

TEST(MinifloatEncode, OverflowInfAndNaNRules) {
  // E4M3 (torch): 464 ties down to 448; anything rounding above is NaN; saturating gives 448.
  EXPECT_EQ(f32_to_f8_e4m3(464.0F), 0x7E);
  EXPECT_EQ(f32_to_f8_e4m3(std::nextafter(464.0F, 1e9F)), 0x7F);
  EXPECT_EQ(f32_to_f8_e4m3(-1e6F), 0xFF);
  EXPECT_EQ(f32_to_f8_e4m3(INFINITY), 0x7F);
  EXPECT_EQ(f32_to_f8_e4m3(INFINITY, true), 0x7E);
  EXPECT_EQ(f32_to_f8_e4m3(-INFINITY, true), 0xFE);
  EXPECT_EQ(f32_to_f8_e4m3(1e6F, true), 0x7E);
  EXPECT_EQ(f32_to_f8_e4m3(NAN, true), 0x7F);
  // E5M2: 61440 ties up (57344 is odd) to Inf.
  EXPECT_EQ(f32_to_f8_e5m2(61440.0F), 0x7C);
  EXPECT_EQ(f32_to_f8_e5m2(std::nextafter(61440.0F, 0.0F)), 0x7B);
  EXPECT_EQ(f32_to_f8_e5m2(-INFINITY), 0xFC);
  EXPECT_EQ(f32_to_f8_e5m2(-INFINITY, true), 0xFB);
  EXPECT_EQ(f32_to_f8_e5m2(NAN), 0x7F);
  EXPECT_EQ(f32_to_f8_e5m2(-NAN), 0xFF);
  // FNUZ: one NaN 0x80, no -0.
  EXPECT_EQ(f32_to_f8_e4m3fnuz(248.0F), 0x80);
  EXPECT_EQ(f32_to_f8_e4m3fnuz(std::nextafter(248.0F, 0.0F)), 0x7F);
  EXPECT_EQ(f32_to_f8_e4m3fnuz(-1e6F, true), 0xFF);
  EXPECT_EQ(f32_to_f8_e4m3fnuz(-INFINITY), 0x80);
  EXPECT_EQ(f32_to_f8_e4m3fnuz(-NAN), 0x80);
  EXPECT_EQ(f32_to_f8_e4m3fnuz(-0.0F), 0x00);
  EXPECT_EQ(f32_to_f8_e4m3fnuz(-0x1p-12F), 0x00);
  EXPECT_EQ(f32_to_f8_e5m2fnuz(-0.0F), 0x00);
  EXPECT_EQ(f32_to_f8_e5m2fnuz(INFINITY), 0x80);
  EXPECT_EQ(f32_to_f8_e5m2fnuz(INFINITY, true), 0x7F);
  // -0 survives where the format has it.
  EXPECT_EQ(f32_to_f8_e4m3(-0.0F), 0x80);
  EXPECT_EQ(f32_to_f8_e5m2(-0.0F), 0x80);
  EXPECT_EQ(f32_to_f6_e3m2(-0.0F), 0x20);
  EXPECT_EQ(f32_to_f4(-0.0F), 0x8);
  // F6 / F4 saturate.
  EXPECT_EQ(f32_to_f4(100.0F), 0x7);
  EXPECT_EQ(f32_to_f4(-INFINITY), 0xF);
  EXPECT_EQ(f32_to_f6_e2m3(8.0F), 0x1F);
  EXPECT_EQ(f32_to_f6_e3m2(-1e9F), 0x3F);
}

TEST(MinifloatEncode, E8M0Rules) {
  EXPECT_EQ(f32_to_f8_e8m0(1.0F), 127);
  EXPECT_EQ(f32_to_f8_e8m0(-4.0F), 129);  // sign ignored
  EXPECT_EQ(f32_to_f8_e8m0(1.4999F), 127);
  EXPECT_EQ(f32_to_f8_e8m0(1.5F), 128);  // tie goes up
  EXPECT_EQ(f32_to_f8_e8m0(3.0F), 129);
  EXPECT_EQ(f32_to_f8_e8m0(0.0F), 0);
  EXPECT_EQ(f32_to_f8_e8m0(0x1p-149F), 0);
  EXPECT_EQ(f32_to_f8_e8m0(0x1.4p-127F), 0);  // nearer 2^-127 than 2^-126
  EXPECT_EQ(f32_to_f8_e8m0(0x1.8p-127F), 1);  // tie between them goes up
  EXPECT_EQ(f32_to_f8_e8m0(0x1p127F), 254);
  EXPECT_EQ(f32_to_f8_e8m0(0x1.7FFFFEp127F), 254);
  EXPECT_EQ(f32_to_f8_e8m0(0x1.8p127F), 255);  // rounds past 2^127: NaN
  EXPECT_EQ(f32_to_f8_e8m0(INFINITY), 255);
  EXPECT_EQ(f32_to_f8_e8m0(NAN), 255);
  // Every float between consecutive powers agrees with "nearest, ties up".
  std::mt19937 rng(7);
  std::uniform_int_distribution<std::uint32_t> bits(0, 0x7F7FFFFFU);
  for (int i = 0; i < 100000; ++i) {
    const float x = std::bit_cast<float>(bits(rng));
    const std::uint8_t c = f32_to_f8_e8m0(x);
    const double v = static_cast<double>(x);
    if (c == 255) {
      EXPECT_GE(v, 0x1.8p127);
      continue;
    }
    const double here = std::ldexp(1.0, c - 127);
    if (c > 0) {
      EXPECT_GE(v, std::ldexp(1.5, c - 128)) << x;
    }
    EXPECT_LT(v, here * 1.5) << x;
  }
}

}  // namespace
}  // namespace safetensors
