// SPDX-License-Identifier: Apache-2.0
// Escaping for terminal output: a small UTF-8 decoder that names each character, so C1 and
// bidirectional controls (which are multi-byte in UTF-8) are caught as well as C0 bytes.
#include "safetensors/printable_text.h"

#include <algorithm>
#include <cstdint>
#include <iterator>

#include <fmt/format.h>

namespace safetensors {
namespace {

/// Length of the well-formed UTF-8 sequence at `text[i]` (RFC 3629: no overlong forms, no
/// surrogates, nothing past U+10FFFF) and its code point; 0 when the byte starts none.
std::size_t utf8_sequence(std::string_view text, std::size_t i, char32_t& code_point) {
  const auto byte = [&text](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char lead = byte(i);
  std::size_t length = 0;
  char32_t value = 0;
  unsigned char low = 0x80;  // the range of the second byte, which rules out overlong forms and surrogates
  unsigned char high = 0xBF;
  if (lead < 0x80) {
    code_point = lead;
    return 1;
  }
  if (lead >= 0xC2 && lead <= 0xDF) {
    length = 2;
    value = lead & 0x1FU;
  } else if (lead >= 0xE0 && lead <= 0xEF) {
    length = 3;
    value = lead & 0x0FU;
    if (lead == 0xE0) low = 0xA0;
    if (lead == 0xED) high = 0x9F;
  } else if (lead >= 0xF0 && lead <= 0xF4) {
    length = 4;
    value = lead & 0x07U;
    if (lead == 0xF0) low = 0x90;
    if (lead == 0xF4) high = 0x8F;
  } else {
    return 0;
  }
  if (text.size() - i < length) return 0;
  for (std::size_t k = 1; k < length; ++k) {
    const unsigned char b = byte(i + k);
    if (b < (k == 1 ? low : 0x80) || b > (k == 1 ? high : 0xBF)) return 0;
    value = (value << 6U) | (b & 0x3FU);
  }
  code_point = value;
  return length;
}

/// Characters shown as \uHHHH: C1 controls, bidirectional controls, line and paragraph separators.
bool escaped_character(char32_t c) {
  return (c >= 0x80 && c <= 0x9F) || (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069) || c == 0x2028 ||
         c == 0x2029;
}

void append_printable(std::string& out, std::string_view text) {
  std::size_t i = 0;
  while (i < text.size()) {
    const auto b = static_cast<unsigned char>(text[i]);
    if (b >= 0x20 && b < 0x7F && b != '\\') {  // the common case: printable ASCII
      out.push_back(static_cast<char>(b));
      ++i;
      continue;
    }
    switch (b) {
      case '\\':
        out += "\\\\";
        ++i;
        continue;
      case '\n':
        out += "\\n";
        ++i;
        continue;
      case '\r':
        out += "\\r";
        ++i;
        continue;
      case '\t':
        out += "\\t";
        ++i;
        continue;
      default: break;
    }
    char32_t c = 0;
    const std::size_t length = b < 0x80 ? 0 : utf8_sequence(text, i, c);  // C0 and DEL: as bytes
    if (length == 0) {
      fmt::format_to(std::back_inserter(out), "\\x{:02x}", b);
      ++i;
    } else if (escaped_character(c)) {
      fmt::format_to(std::back_inserter(out), "\\u{:04x}", static_cast<std::uint32_t>(c));
      i += length;
    } else {
      out.append(text, i, length);
      i += length;
    }
  }
}

}  // namespace

std::string printable_text(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  append_printable(out, text);
  return out;
}

std::string printable_text(std::string_view text, std::size_t max_bytes) {
  std::size_t cut = std::min(max_bytes, text.size());
  // Not through a character: back to the start of a well-formed sequence that the cut splits.
  for (std::size_t back = 1; cut < text.size() && back <= 3 && back <= cut; ++back) {
    const auto b = static_cast<unsigned char>(text[cut - back]);
    if ((b & 0xC0U) == 0x80U) continue;  // a continuation byte: its lead is further back
    char32_t c = 0;
    if (b >= 0xC0U && utf8_sequence(text, cut - back, c) > back) cut -= back;
    break;
  }
  std::string out;
  out.reserve(cut);
  append_printable(out, text.substr(0, cut));
  if (cut < text.size()) fmt::format_to(std::back_inserter(out), "... ({} bytes)", text.size());
  return out;
}

}  // namespace safetensors
