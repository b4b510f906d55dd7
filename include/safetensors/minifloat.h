// SPDX-License-Identifier: Apache-2.0
/// \file minifloat.h
/// Exact scalar codecs between float32 and the 8-, 6- and 4-bit float formats
/// (F8_E4M3, F8_E5M2, F8_E4M3FNUZ, F8_E5M2FNUZ, F8_E8M0, F6_E2M3, F6_E3M2, F4).
/// Decoding is exact. Encoding rounds to nearest, ties to even, and follows torch for
/// the 8-bit formats and the OCP MX spec for F6/F4; docs/dtypes.md has a table per
/// format. Codes of 6- and 4-bit formats live in the low bits of the byte.
#pragma once

#include <bit>
#include <cstdint>

namespace safetensors {
namespace detail {

/// How a format spends its special codes.
enum class minifloat_kind : std::uint8_t {
  ieee,    ///< top exponent is Inf (mantissa 0) or NaN (F8_E5M2)
  fn,      ///< no Inf; only S.1..1.1..1 is NaN (F8_E4M3, torch float8_e4m3fn)
  fnuz,    ///< no Inf, no -0; the code 1.0..0 is the only NaN (F8_*FNUZ)
  finite,  ///< every code is a number (OCP MX F6 / F4)
};

struct minifloat_format {
  int exp_bits;
  int mant_bits;
  int bias;
  minifloat_kind kind;
};

inline constexpr minifloat_format f8_e4m3_format{4, 3, 7, minifloat_kind::fn};
inline constexpr minifloat_format f8_e5m2_format{5, 2, 15, minifloat_kind::ieee};
inline constexpr minifloat_format f8_e4m3fnuz_format{4, 3, 8, minifloat_kind::fnuz};
inline constexpr minifloat_format f8_e5m2fnuz_format{5, 2, 16, minifloat_kind::fnuz};
inline constexpr minifloat_format f6_e2m3_format{2, 3, 1, minifloat_kind::finite};
inline constexpr minifloat_format f6_e3m2_format{3, 2, 3, minifloat_kind::finite};
inline constexpr minifloat_format f4_e2m1_format{2, 1, 1, minifloat_kind::finite};

[[nodiscard]] constexpr float pow2f(int e) noexcept {  // 2^e for e in [-126, 127]
  return std::bit_cast<float>(static_cast<std::uint32_t>(e + 127) << 23);
}

template <minifloat_format F>
[[nodiscard]] constexpr float minifloat_decode(std::uint32_t code) noexcept {
  constexpr int width = 1 + F.exp_bits + F.mant_bits;
  constexpr std::uint32_t mant_mask = (1U << F.mant_bits) - 1U;
  constexpr std::uint32_t exp_max = (1U << F.exp_bits) - 1U;
  const std::uint32_t sign = (code >> (width - 1)) & 1U;
  const std::uint32_t exp = (code >> F.mant_bits) & exp_max;
  const std::uint32_t mant = code & mant_mask;
  const std::uint32_t sign_bit = sign << 31;
  if constexpr (F.kind == minifloat_kind::ieee) {
    if (exp == exp_max) return std::bit_cast<float>(sign_bit | 0x7F800000U | (mant << (23 - F.mant_bits)));
  } else if constexpr (F.kind == minifloat_kind::fn) {
    if (exp == exp_max && mant == mant_mask) return std::bit_cast<float>(sign_bit | 0x7FC00000U);
  } else if constexpr (F.kind == minifloat_kind::fnuz) {
    if (sign != 0 && exp == 0 && mant == 0) return std::bit_cast<float>(0x7FC00000U);
  }
  if (exp == 0) {
    // Subnormal or zero: mant * 2^(1 - bias - mant_bits), exact in float32.
    const float magnitude = static_cast<float>(mant) * pow2f(1 - F.bias - F.mant_bits);
    return sign != 0 ? -magnitude : magnitude;
  }
  const auto f32_exp = static_cast<std::uint32_t>(static_cast<int>(exp) - F.bias + 127);
  return std::bit_cast<float>(sign_bit | (f32_exp << 23) | (mant << (23 - F.mant_bits)));
}

/// Round-to-nearest-even encoder. `saturate` makes finite overflow and Inf give the
/// largest finite code (formats with a NaN keep NaN). Kind `finite` always saturates;
/// NaN has no code there and gives 0 (bulk encoders report it as an error instead).
template <minifloat_format F>
[[nodiscard]] constexpr std::uint8_t minifloat_encode(float value, bool saturate) noexcept {
  constexpr int width = 1 + F.exp_bits + F.mant_bits;
  constexpr int shift = 23 - F.mant_bits;
  constexpr std::uint32_t mant_mask = (1U << F.mant_bits) - 1U;
  constexpr std::uint32_t exp_max = (1U << F.exp_bits) - 1U;
  constexpr std::uint32_t all_ones = (1U << (width - 1)) - 1U;  // magnitude bits all set
  constexpr std::uint32_t max_code = F.kind == minifloat_kind::ieee ? ((exp_max - 1U) << F.mant_bits) | mant_mask
                                     : F.kind == minifloat_kind::fn ? all_ones - 1U
                                                                    : all_ones;
  constexpr std::uint32_t nan_code = F.kind == minifloat_kind::fnuz ? 1U << (width - 1) : all_ones;
  constexpr std::uint32_t overflow_code = F.kind == minifloat_kind::ieee     ? exp_max << F.mant_bits  // Inf
                                          : F.kind == minifloat_kind::finite ? max_code
                                                                             : nan_code;
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t a = u & 0x7FFFFFFFU;
  const std::uint32_t sign = (u >> 31) << (width - 1);
  if (a > 0x7F800000U) {
    if constexpr (F.kind == minifloat_kind::finite) return 0;
    if constexpr (F.kind == minifloat_kind::fnuz) return static_cast<std::uint8_t>(nan_code);
    return static_cast<std::uint8_t>(sign | nan_code);
  }
  std::uint32_t mag = 0;
  constexpr std::uint32_t min_normal_bits = static_cast<std::uint32_t>(128 - F.bias) << 23;  // 2^(1-bias)
  if (a < min_normal_bits) {
    // Below the smallest normal: adding C, whose ulp is the subnormal step, makes the
    // FPU round to the subnormal grid (ties to even); the low bits are the code.
    constexpr float c = pow2f(1 - F.bias - F.mant_bits + 23);
    mag = std::bit_cast<std::uint32_t>(std::bit_cast<float>(a) + c) - std::bit_cast<std::uint32_t>(c);
  } else {
    // Rebias the exponent, then round the mantissa; a carry moves into the exponent.
    const std::uint32_t rebased = a - (static_cast<std::uint32_t>(127 - F.bias) << 23);
    const std::uint32_t odd = (rebased >> shift) & 1U;
    mag = (rebased + (1U << (shift - 1)) - 1U + odd) >> shift;
    if (mag > max_code) mag = saturate ? max_code : overflow_code;
  }
  if constexpr (F.kind == minifloat_kind::fnuz) {
    if (mag == 0) return 0;  // no negative zero
    if (mag == nan_code) return static_cast<std::uint8_t>(mag);
  }
  return static_cast<std::uint8_t>(sign | mag);
}

}  // namespace detail

/// F8_E4M3 (torch float8_e4m3fn) code to float32: bias 7, no Inf, S.1111.111 is NaN, max 448.
[[nodiscard]] constexpr float f8_e4m3_to_f32(std::uint8_t code) noexcept {
  return detail::minifloat_decode<detail::f8_e4m3_format>(code);
}
/// F8_E5M2 code to float32: IEEE-like, bias 15, Inf and NaN, max 57344.
[[nodiscard]] constexpr float f8_e5m2_to_f32(std::uint8_t code) noexcept {
  return detail::minifloat_decode<detail::f8_e5m2_format>(code);
}
/// F8_E4M3FNUZ code to float32: bias 8, no Inf, no -0, 0x80 is NaN, max 240.
[[nodiscard]] constexpr float f8_e4m3fnuz_to_f32(std::uint8_t code) noexcept {
  return detail::minifloat_decode<detail::f8_e4m3fnuz_format>(code);
}
/// F8_E5M2FNUZ code to float32: bias 16, no Inf, no -0, 0x80 is NaN, max 57344.
[[nodiscard]] constexpr float f8_e5m2fnuz_to_f32(std::uint8_t code) noexcept {
  return detail::minifloat_decode<detail::f8_e5m2fnuz_format>(code);
}
/// F8_E8M0 (torch float8_e8m0fnu) code to float32: 2^(code-127); 0xFF is NaN; no zero,
/// no sign. Code 0 is 2^-127, a float32 subnormal.
[[nodiscard]] constexpr float f8_e8m0_to_f32(std::uint8_t code) noexcept {
  if (code == 0xFF) return std::bit_cast<float>(0x7FC00000U);
  if (code == 0) return std::bit_cast<float>(0x00400000U);
  return std::bit_cast<float>(static_cast<std::uint32_t>(code) << 23);
}
/// F6_E2M3 code (low 6 bits) to float32: OCP MX FP6, bias 1, no Inf/NaN, max 7.5.
[[nodiscard]] constexpr float f6_e2m3_to_f32(std::uint8_t code) noexcept {
  return detail::minifloat_decode<detail::f6_e2m3_format>(code & 0x3FU);
}
/// F6_E3M2 code (low 6 bits) to float32: OCP MX FP6, bias 3, no Inf/NaN, max 28.
[[nodiscard]] constexpr float f6_e3m2_to_f32(std::uint8_t code) noexcept {
  return detail::minifloat_decode<detail::f6_e3m2_format>(code & 0x3FU);
}
/// F4 (E2M1, OCP MXFP4) code (low 4 bits) to float32: 0, 0.5, 1, 1.5, 2, 3, 4, 6 and negatives.
[[nodiscard]] constexpr float f4_to_f32(std::uint8_t code) noexcept {
  return detail::minifloat_decode<detail::f4_e2m1_format>(code & 0x0FU);
}

/// float32 to F8_E4M3, as torch: overflow (|x| >= 464 after rounding) and Inf give NaN
/// of the input's sign; with `saturate`, they give +-448 instead. NaN gives S.1111.111.
[[nodiscard]] constexpr std::uint8_t f32_to_f8_e4m3(float value, bool saturate = false) noexcept {
  return detail::minifloat_encode<detail::f8_e4m3_format>(value, saturate);
}
/// float32 to F8_E5M2, as torch: overflow (|x| >= 61440) gives +-Inf, NaN gives S.11111.11;
/// with `saturate`, overflow and Inf give +-57344.
[[nodiscard]] constexpr std::uint8_t f32_to_f8_e5m2(float value, bool saturate = false) noexcept {
  return detail::minifloat_encode<detail::f8_e5m2_format>(value, saturate);
}
/// float32 to F8_E4M3FNUZ, as torch: overflow (|x| >= 248), Inf and NaN give 0x80; results
/// that round to zero are +0. With `saturate`, overflow and Inf give +-240.
[[nodiscard]] constexpr std::uint8_t f32_to_f8_e4m3fnuz(float value, bool saturate = false) noexcept {
  return detail::minifloat_encode<detail::f8_e4m3fnuz_format>(value, saturate);
}
/// float32 to F8_E5M2FNUZ, as torch: overflow (|x| >= 61440), Inf and NaN give 0x80; zero is +0.
/// With `saturate`, overflow and Inf give +-57344.
[[nodiscard]] constexpr std::uint8_t f32_to_f8_e5m2fnuz(float value, bool saturate = false) noexcept {
  return detail::minifloat_encode<detail::f8_e5m2fnuz_format>(value, saturate);
}
/// float32 to F8_E8M0, as torch: the sign is ignored (scales are magnitudes); |x| rounds
/// to the nearer power of two, ties (1.5 * 2^e) going up; zero gives code 0 (2^-127);
/// NaN, Inf and |x| >= 1.5 * 2^127 give 0xFF (NaN). One deviation: torch sends float32
/// subnormals in (2^-127, 1.5 * 2^-127) up to 2^-126; here they go to the nearer 2^-127.
[[nodiscard]] constexpr std::uint8_t f32_to_f8_e8m0(float value) noexcept {
  const std::uint32_t u = std::bit_cast<std::uint32_t>(value);
  const std::uint32_t exp = (u >> 23) & 0xFFU;
  if (exp == 0xFF) return 0xFF;
  // Normal 1.m * 2^e: the midpoint to 2^(e+1) is m = 0.5 (top mantissa bit).
  // Subnormal 0.m * 2^-126: the midpoint between 2^-127 and 2^-126 is m = 0.75.
  const bool up = exp != 0 ? (u & 0x400000U) != 0 : (u & 0x7FFFFFU) >= 0x600000U;
  return static_cast<std::uint8_t>(exp + (up ? 1U : 0U));
}
/// float32 to F6_E2M3 (low 6 bits): overflow and Inf saturate to +-7.5 (OCP MX); NaN gives 0.
[[nodiscard]] constexpr std::uint8_t f32_to_f6_e2m3(float value) noexcept {
  return detail::minifloat_encode<detail::f6_e2m3_format>(value, true);
}
/// float32 to F6_E3M2 (low 6 bits): overflow and Inf saturate to +-28 (OCP MX); NaN gives 0.
[[nodiscard]] constexpr std::uint8_t f32_to_f6_e3m2(float value) noexcept {
  return detail::minifloat_encode<detail::f6_e3m2_format>(value, true);
}
/// float32 to F4 (low 4 bits): overflow and Inf saturate to +-6 (OCP MX); NaN gives 0.
[[nodiscard]] constexpr std::uint8_t f32_to_f4(float value) noexcept {
  return detail::minifloat_encode<detail::f4_e2m1_format>(value, true);
}

}  // namespace safetensors
