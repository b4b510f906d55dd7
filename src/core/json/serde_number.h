// SPDX-License-Identifier: Apache-2.0
// Internal: how serde_json reads a JSON number, so numbers the reference never looks at
// (inside ignored fields) get its verdict rather than simdjson's. simdjson rejects
// integers beyond 64 bits, which serde_json reads as floats; serde_json's float reading
// (default features, no `float_roundtrip`) multiplies a u64 significand by a power of ten
// in double precision, so it rejects some numbers that round to f64::MAX exactly.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace safetensors::detail {

enum class serde_number {
  unsigned_integer,  ///< fits u64
  negative_integer,  ///< fits i64 and is below zero
  floating,          ///< a finite f64 (a fraction, an exponent, `-0`, or an integer beyond 64 bits)
  out_of_range,      ///< serde_json's "number out of range"
  not_a_number,      ///< not a JSON number token
};

/// serde_json's reading of `token`, which must be one whole number token (e.g. `-12.5e3`).
[[nodiscard]] serde_number classify_serde_number(std::string_view token) noexcept;

/// Calls `visit(offset, token)` for every number token of `json` outside strings: each
/// maximal run of `0-9 + - . e E` that starts with a digit or `-`. Cheap, but not a
/// parser: in invalid JSON it may report garbage as tokens.
template <class Visit>
void for_each_number_token(std::string_view json, Visit&& visit) {
  auto number_char = [](char c) {
    return (c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.' || c == 'e' || c == 'E';
  };
  std::size_t i = 0;
  while (i < json.size()) {
    const char c = json[i];
    if (c == '"') {
      for (++i; i < json.size() && json[i] != '"'; ++i) {
        if (json[i] == '\\') ++i;
      }
      ++i;
    } else if (c == '-' || (c >= '0' && c <= '9')) {
      const std::size_t start = i;
      while (i < json.size() && number_char(json[i])) ++i;
      visit(start, json.substr(start, i - start));
    } else {
      ++i;
    }
  }
}

}  // namespace safetensors::detail
