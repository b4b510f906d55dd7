// SPDX-License-Identifier: Apache-2.0
// serde_json-compatible string escaping.
#include "json/json_escape.h"

namespace safetensors {

namespace {

/// The length of a character at `text[i]` that display JSON writes as \uHHHH, and the
/// character: DEL, the C1 controls (C2 80..C2 9F), the bidirectional controls U+202A-U+202E
/// and U+2066-U+2069 (E2 80 AA..AE, E2 81 A6..A9) and U+2028/U+2029 (E2 80 A8/A9), which
/// terminals obey or many line-based tools split lines at; 0 for any other.
std::size_t display_escape_at(std::string_view text, std::size_t i, unsigned& code_point) {
  const auto byte = [&text](std::size_t k) { return static_cast<unsigned char>(text[k]); };
  const unsigned char c = byte(i);
  if (c == 0x7F) {
    code_point = c;
    return 1;
  }
  if (c == 0xC2 && i + 1 < text.size() && byte(i + 1) >= 0x80 && byte(i + 1) <= 0x9F) {
    code_point = byte(i + 1);
    return 2;
  }
  if (c != 0xE2 || i + 2 >= text.size()) return 0;
  const unsigned char b1 = byte(i + 1);
  const unsigned char b2 = byte(i + 2);
  if ((b1 == 0x80 && b2 >= 0xA8 && b2 <= 0xAE) || (b1 == 0x81 && b2 >= 0xA6 && b2 <= 0xA9)) {
    code_point = 0x2000U | ((b1 & 0x3FU) << 6U) | (b2 & 0x3FU);
    return 3;
  }
  return 0;
}

void append_escaped(std::string& out, std::string_view text, bool for_display) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0x7F && c != 0xC2 && c != 0xE2) continue;
    if (c == 0x7F || c == 0xC2 || c == 0xE2) {
      unsigned code_point = 0;
      const std::size_t length = for_display ? display_escape_at(text, i, code_point) : 0;
      if (length == 0) continue;
      out.append(text, run_start, i - run_start);
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4)
        out.push_back(hex[(code_point >> static_cast<unsigned>(shift)) & 0xFU]);
      i += length - 1;
      run_start = i + 1;
      continue;
    }
    out.append(text, run_start, i - run_start);
    run_start = i + 1;
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\b': out += "\\b"; break;
      case '\f': out += "\\f"; break;
      default:
        out += "\\u00";
        out.push_back(hex[c >> 4]);
        out.push_back(hex[c & 0xF]);
    }
  }
  out.append(text, run_start, text.size() - run_start);
  out.push_back('"');
}

}  // namespace

void detail::append_json_string(std::string& out, std::string_view text) { append_escaped(out, text, false); }
void detail::append_json_display_string(std::string& out, std::string_view text) { append_escaped(out, text, true); }

}  // namespace safetensors
