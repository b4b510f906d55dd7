// SPDX-License-Identifier: Apache-2.0
#include "json_words.h"

namespace safetensors::detail {

namespace {

/// What simdjson's first pass reports on `json`: UNCLOSED_STRING when its unescaped quotes are
/// odd in number, else UNESCAPED_CHARS when a string holds a byte below 0x20, else SUCCESS. A
/// backslash escapes the next byte's quote inside or outside a string, as the pass's escape
/// scanner has it (an escaped control byte is still unescaped).
simdjson::error_code first_pass_error(std::string_view json) noexcept {
  bool in_string = false;
  bool unescaped = false;
  for (std::size_t i = 0; i < json.size(); ++i) {
    const auto c = static_cast<unsigned char>(json[i]);
    if (in_string && c < 0x20) unescaped = true;
    if (c == '\\') {
      // The escaped byte neither opens nor closes a string, but is still a control byte.
      if (++i < json.size() && in_string && static_cast<unsigned char>(json[i]) < 0x20) unescaped = true;
    } else if (c == '"') {
      in_string = !in_string;
    }
  }
  if (in_string) return simdjson::UNCLOSED_STRING;
  return unescaped ? simdjson::UNESCAPED_CHARS : simdjson::SUCCESS;
}

}  // namespace

const char* json_error_words(simdjson::error_code reported, std::string_view json) noexcept {
  switch (reported) {
    case simdjson::MEMALLOC:
    case simdjson::CAPACITY: return simdjson::error_message(reported);  // found before the first pass
    default: break;
  }
  const auto first = first_pass_error(json);
  return simdjson::error_message(first != simdjson::SUCCESS ? first : reported);
}

}  // namespace safetensors::detail
