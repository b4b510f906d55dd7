// SPDX-License-Identifier: Apache-2.0
// serde_json's number reading (de.rs of serde_json 1.x, default features), rewritten from
// its documented behaviour: digits accumulate into a u64 significand; the digit that would
// overflow it and all later integer digits only raise the decimal exponent, later fraction
// digits are dropped; an exponent beyond i32 is out of range unless the significand is 0 or
// the exponent negative; then significand * 10^exp is computed in double precision, a
// power (1e0..1e308) at a time, and an infinite product is "number out of range".
#include "json/serde_number.h"

#include <algorithm>
#include <array>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <limits>
namespace safetensors::detail {
namespace {

/// 1e0 ... 1e308, correctly rounded (Rust float literals). Built on first use: only
/// headers with unusual numbers get here.
const std::array<double, 309>& powers_of_ten() {
  static const std::array<double, 309> table = [] {
    std::array<double, 309> t{};
    for (std::size_t e = 0; e < t.size(); ++e) {
      char text[8] = {'1', 'e'};
      char* end = std::to_chars(text + 2, text + sizeof text, e).ptr;
      std::from_chars(text, end, t[e]);
    }
    return t;
  }();
  return table;
}

bool is_digit(char c) noexcept { return c >= '0' && c <= '9'; }

/// serde_json's overflow test for `value * 10 + digit` against `max`.
template <class T>
bool would_overflow(T value, T digit, T max) noexcept {
  return value >= max / 10 && (value > max / 10 || digit > max % 10);
}

class number_reader {
 public:
  explicit number_reader(std::string_view token) noexcept : s_(token) {}

  serde_number read() noexcept {
    bool positive = true;
    if (peek() == '-') {
      positive = false;
      ++i_;
    }
    if (!is_digit(peek())) return serde_number::not_a_number;
    std::uint64_t significand = 0;
    if (peek() == '0') {
      ++i_;
      if (is_digit(peek())) return serde_number::not_a_number;  // leading zero
    } else {
      while (is_digit(peek())) {
        const auto digit = static_cast<std::uint64_t>(peek() - '0');
        if (would_overflow<std::uint64_t>(significand, digit, UINT64_MAX)) return long_integer(significand);
        significand = significand * 10 + digit;
        ++i_;
      }
    }
    if (peek() == '.') return fraction(significand, 0);
    if (peek() == 'e' || peek() == 'E') return exponent(significand, 0);
    if (!at_end()) return serde_number::not_a_number;
    if (positive) return serde_number::unsigned_integer;
    // -0 and magnitudes beyond 2^63 are floats.
    const bool fits_i64 = significand != 0 && significand <= std::uint64_t{1} << 63;
    return fits_i64 ? serde_number::negative_integer : serde_number::floating;
  }

 private:
  [[nodiscard]] char peek() const noexcept { return i_ < s_.size() ? s_[i_] : '\0'; }
  [[nodiscard]] bool at_end() const noexcept { return i_ == s_.size(); }

  serde_number long_integer(std::uint64_t significand) noexcept {
    std::int32_t exp = 0;
    while (is_digit(peek())) {
      ++i_;
      ++exp;  // the header cap (1e8 bytes) keeps this far from i32 overflow
    }
    if (peek() == '.') return fraction(significand, exp);
    if (peek() == 'e' || peek() == 'E') return exponent(significand, exp);
    return from_parts(significand, exp);
  }

  serde_number fraction(std::uint64_t significand, std::int32_t exp_before_point) noexcept {
    ++i_;  // '.'
    std::int32_t exp_after_point = 0;
    bool any_digit = false;
    while (is_digit(peek())) {
      any_digit = true;
      const auto digit = static_cast<std::uint64_t>(peek() - '0');
      if (would_overflow<std::uint64_t>(significand, digit, UINT64_MAX)) {
        while (is_digit(peek())) ++i_;  // further digits are ignored
        break;
      }
      significand = significand * 10 + digit;
      --exp_after_point;
      ++i_;
    }
    if (!any_digit) return serde_number::not_a_number;
    const std::int32_t exp = exp_before_point + exp_after_point;
    if (peek() == 'e' || peek() == 'E') return exponent(significand, exp);
    return from_parts(significand, exp);
  }

  serde_number exponent(std::uint64_t significand, std::int32_t starting) noexcept {
    ++i_;  // 'e'
    bool positive_exp = true;
    if (peek() == '+' || peek() == '-') {
      positive_exp = peek() == '+';
      ++i_;
    }
    if (!is_digit(peek())) return serde_number::not_a_number;
    std::int32_t exp = 0;
    while (is_digit(peek())) {
      const std::int32_t digit = peek() - '0';
      ++i_;
      if (would_overflow<std::int32_t>(exp, digit, std::numeric_limits<std::int32_t>::max())) {
        if (significand != 0 && positive_exp) return serde_number::out_of_range;
        while (is_digit(peek())) ++i_;
        return at_end() ? serde_number::floating : serde_number::not_a_number;  // +-0.0
      }
      exp = exp * 10 + digit;
    }
    const std::int64_t total = positive_exp ? std::int64_t{starting} + exp : std::int64_t{starting} - exp;
    const auto saturated = static_cast<std::int32_t>(std::clamp<std::int64_t>(
        total, std::numeric_limits<std::int32_t>::min(), std::numeric_limits<std::int32_t>::max()));
    return from_parts(significand, saturated);
  }

  serde_number from_parts(std::uint64_t significand, std::int32_t exp) const noexcept {
    if (!at_end()) return serde_number::not_a_number;
    const auto& pow10 = powers_of_ten();
    auto f = static_cast<double>(significand);
    std::int64_t e = exp;
    while (true) {
      const std::int64_t magnitude = e < 0 ? -e : e;
      if (magnitude < static_cast<std::int64_t>(pow10.size())) {
        if (e >= 0) {
          f *= pow10[static_cast<std::size_t>(magnitude)];
          if (std::isinf(f)) return serde_number::out_of_range;
        } else {
          f /= pow10[static_cast<std::size_t>(magnitude)];
        }
        return serde_number::floating;
      }
      if (f == 0.0) return serde_number::floating;
      if (e >= 0) return serde_number::out_of_range;
      f /= 1e308;
      e += 308;
    }
  }

  std::string_view s_;
  std::size_t i_ = 0;
};

}  // namespace

serde_number classify_serde_number(std::string_view token) noexcept { return number_reader(token).read(); }

}  // namespace safetensors::detail
