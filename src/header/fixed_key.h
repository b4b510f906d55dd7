// SPDX-License-Identifier: Apache-2.0
// Internal: comparing a JSON key with a fixed field name at a constant length.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string_view>

namespace safetensors::detail {

/// A string literal as a template argument, so its length is a constant.
template <std::size_t N>
struct literal {
  constexpr literal(const char (&text)[N]) { std::copy_n(text, N, chars); }  // NOLINT: implicit by design
  char chars[N];
};

/// `key == Expected`, with a constant length: compiles to a few integer compares where
/// `operator==` calls memcmp (a tenth of the parse time, once per field of every entry).
template <literal Expected>
bool is_key(std::string_view key) noexcept {
  constexpr std::size_t n = sizeof(Expected.chars) - 1;
  return key.size() == n && std::memcmp(key.data(), Expected.chars, n) == 0;
}

}  // namespace safetensors::detail
