// SPDX-License-Identifier: Apache-2.0
// Internal: comparing JSON keys and short names without memcmp calls.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <string_view>

namespace safetensors::detail {

/// A string literal as a template argument, so its length is a constant.
template <std::size_t N>
struct literal {
  constexpr literal(const char (&text)[N]) { std::copy_n(text, N, chars); }  // NOLINT: implicit by design
  char chars[N];
};

/// The first `N` bytes at `text` equal `Expected`'s, compared as whole words: a constant-size
/// memcmp past 8 bytes stays a library call with g++ 12.
template <literal Expected, std::size_t N = sizeof(Expected.chars) - 1>
bool starts_with_key(const char* text) noexcept {
  std::size_t at = 0;
  for (; at + 8 <= N; at += 8) {
    std::uint64_t a = 0;
    std::uint64_t b = 0;
    std::memcpy(&a, text + at, 8);
    std::memcpy(&b, Expected.chars + at, 8);
    if (a != b) return false;
  }
  return std::memcmp(text + at, Expected.chars + at, N - at) == 0;
}

/// `key == Expected`, with a constant length: compiles to a few integer compares where
/// `operator==` calls memcmp (a tenth of the parse time, once per field of every entry).
template <literal Expected>
bool is_key(std::string_view key) noexcept {
  return key.size() == sizeof(Expected.chars) - 1 && starts_with_key<Expected>(key.data());
}

/// `a == b` for strings as short as dtype names, without a call to memcmp.
inline bool same_short_text(std::string_view a, std::string_view b) noexcept {
  if (a.size() != b.size()) return false;
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (a[i] != b[i]) return false;
  }
  return true;
}

}  // namespace safetensors::detail
