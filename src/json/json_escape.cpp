// SPDX-License-Identifier: Apache-2.0
// serde_json-compatible string escaping.
#include "json/json_escape.h"

namespace safetensors {

namespace {

/// True when `text[i]` starts U+2028 or U+2029 (E2 80 A8 / E2 80 A9 in UTF-8).
bool line_separator_at(std::string_view text, std::size_t i) {
  return i + 2 < text.size() && text[i + 1] == '\x80' && (text[i + 2] == '\xA8' || text[i + 2] == '\xA9');
}

void append_escaped(std::string& out, std::string_view text, bool escape_line_separators) {
  static constexpr char hex[] = "0123456789abcdef";
  out.push_back('"');
  std::size_t run_start = 0;
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    if (c >= 0x20 && c != '"' && c != '\\' && c != 0xE2) continue;
    if (c == 0xE2) {
      if (!escape_line_separators || !line_separator_at(text, i)) continue;
      out.append(text, run_start, i - run_start);
      out += text[i + 2] == '\xA8' ? "\\u2028" : "\\u2029";
      i += 2;
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

}  // namespace safetensors

#include "header/header_json.h"
#include "safetensors/json_text.h"

namespace safetensors {

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  append_escaped(out, text, true);
  return out;
}

std::string header_to_json(const header& h) { return detail::header_json(h.tensors(), h.metadata()); }

}  // namespace safetensors
