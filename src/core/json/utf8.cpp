// SPDX-License-Identifier: Apache-2.0
// UTF-8 validation with the position of the first error.
#include "json/utf8.h"

#include <simdjson.h>

namespace safetensors::detail {
namespace {

/// Length of the valid sequence starting at `i`, or 0 when it is invalid (RFC 3629:
/// no overlongs, no surrogates, nothing above U+10FFFF).
std::size_t sequence_length(const unsigned char* s, std::size_t i, std::size_t n) noexcept {
  const unsigned c = s[i];
  if (c < 0x80) return 1;
  std::size_t len = 0;
  unsigned lo = 0x80;
  unsigned hi = 0xBF;
  if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    if (c == 0xE0) lo = 0xA0;
    if (c == 0xED) hi = 0x9F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    if (c == 0xF0) lo = 0x90;
    if (c == 0xF4) hi = 0x8F;
  } else {
    return 0;
  }
  if (i + len > n) return 0;
  if (s[i + 1] < lo || s[i + 1] > hi) return 0;
  for (std::size_t k = 2; k < len; ++k) {
    if (s[i + k] < 0x80 || s[i + k] > 0xBF) return 0;
  }
  return len;
}

}  // namespace

std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept {
  if (simdjson::validate_utf8(text.data(), text.size())) return std::nullopt;
  const auto* s = reinterpret_cast<const unsigned char*>(text.data());
  for (std::size_t i = 0; i < text.size();) {
    std::size_t len = sequence_length(s, i, text.size());
    if (len == 0) return i;
    i += len;
  }
  return std::nullopt;  // unreachable when simdjson and the scan agree
}

}  // namespace safetensors::detail
