// SPDX-License-Identifier: Apache-2.0
// Force-included in the WebAssembly build only (web/CMakeLists.txt): emscripten 3.1.6's libc++
// (LLVM 14) predates three C++20/17 library features the core uses. Each stand-in is defined
// only when the library lacks the feature.
#pragma once

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <iterator>
#include <memory>
#include <string>
#include <type_traits>

namespace std {

#if !defined(__cpp_lib_bit_cast)
template <class To, class From>
requires(sizeof(To) == sizeof(From) && is_trivially_copyable_v<To> && is_trivially_copyable_v<From>) constexpr To
    bit_cast(const From& from) noexcept {
  return __builtin_bit_cast(To, from);
}
#endif

#if !defined(__cpp_lib_smart_ptr_for_overwrite)
template <class T>
requires is_unbounded_array_v<T> unique_ptr<T> make_unique_for_overwrite(size_t n) {
  return unique_ptr<T>(new remove_extent_t<T>[n]);
}
#endif

// Floating-point from_chars (libc++ 14 has only the integer overloads): musl's strtod, which
// rounds correctly, on a NUL-terminated copy. The core parses plain decimal text with it.
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 170000
inline from_chars_result from_chars(const char* first, const char* last, double& value) {
  const string text(first, last);
  char* end = nullptr;
  const double parsed = strtod(text.c_str(), &end);
  if (end == text.c_str()) return {first, errc::invalid_argument};
  value = parsed;
  return {first + (end - text.c_str()), errc{}};
}
inline from_chars_result from_chars(const char* first, const char* last, float& value) {
  const string text(first, last);
  char* end = nullptr;
  const float parsed = strtof(text.c_str(), &end);
  if (end == text.c_str()) return {first, errc::invalid_argument};
  value = parsed;
  return {first + (end - text.c_str()), errc{}};
}

// Floating-point to_chars, shortest form (what GGUF's metadata text prints): the fewest
// significant digits that read back as `value`, written fixed or scientific, whichever is
// shorter (fixed on a tie), as the standard specifies.
template <class F>
to_chars_result safetensors_shortest_chars(char* first, char* last, F value) {
  char text[64];
  int length = 0;
  if (!isfinite(value)) {
    length = snprintf(text, sizeof text, "%g", static_cast<double>(value));
  } else {
    char digits_text[40];
    for (int precision = 0; precision <= 17; ++precision) {
      snprintf(digits_text, sizeof digits_text, "%.*e", precision, static_cast<double>(value));
      char* end = nullptr;
      const F back = sizeof(F) == sizeof(float) ? static_cast<F>(strtof(digits_text, &end))
                                                : static_cast<F>(strtod(digits_text, &end));
      if (back == value) break;
    }
    // digits_text: [-]d[.ddd]e[+-]xx
    string mantissa(digits_text, strchr(digits_text, 'e'));
    const int exponent = atoi(strchr(digits_text, 'e') + 1);
    const bool negative = mantissa[0] == '-';
    string digits;
    for (char c : mantissa) {
      if (c >= '0' && c <= '9') digits += c;
    }
    const int n = static_cast<int>(digits.size());
    string scientific = string(negative ? "-" : "") + digits.substr(0, 1) + (n > 1 ? "." + digits.substr(1) : "");
    char exponent_text[8];
    snprintf(exponent_text, sizeof exponent_text, "e%c%02d", exponent < 0 ? '-' : '+',
             exponent < 0 ? -exponent : exponent);
    scientific += exponent_text;
    string fixed = negative ? "-" : "";
    if (exponent >= n - 1) {
      fixed += digits + string(static_cast<size_t>(exponent - n + 1), '0');
    } else if (exponent >= 0) {
      fixed +=
          digits.substr(0, static_cast<size_t>(exponent + 1)) + "." + digits.substr(static_cast<size_t>(exponent + 1));
    } else {
      fixed += "0." + string(static_cast<size_t>(-exponent - 1), '0') + digits;
    }
    const string& best = fixed.size() <= scientific.size() ? fixed : scientific;
    length = snprintf(text, sizeof text, "%s", best.c_str());
  }
  if (length > last - first) return {last, errc::value_too_large};
  memcpy(first, text, static_cast<size_t>(length));
  return {first + length, errc{}};
}
inline to_chars_result to_chars(char* first, char* last, double value) {
  return safetensors_shortest_chars(first, last, value);
}
inline to_chars_result to_chars(char* first, char* last, float value) {
  return safetensors_shortest_chars(first, last, value);
}
#endif

// The range algorithms the GGUF reader uses (libc++ 14 lacks them): over a whole range, with
// a projection.
#if defined(_LIBCPP_VERSION) && _LIBCPP_VERSION < 150000
namespace ranges {
struct safetensors_less {
  template <class A, class B>
  constexpr bool operator()(const A& a, const B& b) const {
    return a < b;
  }
};
template <class R, class T, class Proj = identity>
constexpr auto find(R&& r, const T& value, Proj proj = {}) {
  auto it = std::begin(r);
  for (; it != std::end(r); ++it) {
    if (invoke(proj, *it) == value) break;
  }
  return it;
}
template <class R, class Pred>
constexpr auto find_if(R&& r, Pred pred) {
  auto it = std::begin(r);
  for (; it != std::end(r); ++it) {
    if (pred(*it)) break;
  }
  return it;
}
template <class R, class Comp = safetensors_less, class Proj = identity>
constexpr bool is_sorted(const R& r, Comp comp = {}, Proj proj = {}) {
  auto it = std::begin(r);
  if (it == std::end(r)) return true;
  for (auto next = std::next(it); next != std::end(r); ++it, ++next) {
    if (comp(invoke(proj, *next), invoke(proj, *it))) return false;
  }
  return true;
}
template <class R, class T, class Comp = safetensors_less, class Proj = identity>
constexpr auto lower_bound(R&& r, const T& value, Comp comp = {}, Proj proj = {}) {
  auto first = std::begin(r);
  auto count = std::distance(first, std::end(r));
  while (count > 0) {
    const auto half = count / 2;
    auto middle = std::next(first, half);
    if (comp(invoke(proj, *middle), value)) {
      first = std::next(middle);
      count -= half + 1;
    } else {
      count = half;
    }
  }
  return first;
}
}  // namespace ranges
#endif

}  // namespace std
