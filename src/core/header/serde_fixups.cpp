// SPDX-License-Identifier: Apache-2.0
#include "header/serde_fixups.h"

#include <fmt/format.h>
#include <simdjson.h>

#include "json/serde_number.h"

namespace safetensors::detail {

/// True when a `-0` integer token may stand where a number can (after `[`, `,`, `:` or
/// whitespace). A cheap filter: strings can contain such text too.
bool may_contain_negative_zero(std::string_view text) {
  for (std::size_t at = text.find("-0"); at != std::string_view::npos; at = text.find("-0", at + 1)) {
    const char next = at + 2 < text.size() ? text[at + 2] : ' ';
    if ((next >= '0' && next <= '9') || next == '.' || next == 'e' || next == 'E') continue;
    std::size_t p = at;
    while (p > 0 && (text[p - 1] == ' ' || text[p - 1] == '\t' || text[p - 1] == '\n' || text[p - 1] == '\r')) --p;
    if (p > 0 && (text[p - 1] == '[' || text[p - 1] == ',' || text[p - 1] == ':')) return true;
  }
  return false;
}

/// simdjson's DOM reads `-0` as the integer 0, serde reads it as a float, so the
/// reference rejects it in a shape or data_offsets. The DOM keeps no source text; this
/// rare path re-reads the raw number tokens of those arrays with the on-demand API.
std::optional<error> find_negative_zero(std::string_view text) {
  namespace od = simdjson::ondemand;
  od::parser parser;
  simdjson::padded_string padded(text);
  od::document doc;
  od::object top;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS || doc.get_object().get(top) != simdjson::SUCCESS) {
    return std::nullopt;  // the DOM pass already accepted the text; nothing to add
  }
  for (auto field : top) {
    std::string_view name;
    od::object entry;
    if (field.unescaped_key().get(name) != simdjson::SUCCESS) return std::nullopt;
    const std::string tensor(name);
    if (field.value().get_object().get(entry) != simdjson::SUCCESS) continue;
    for (auto member : entry) {
      std::string_view key;
      od::array numbers;
      if (member.unescaped_key().get(key) != simdjson::SUCCESS) return std::nullopt;
      if ((key != "shape" && key != "data_offsets") || member.value().get_array().get(numbers) != simdjson::SUCCESS) {
        continue;
      }
      for (auto n : numbers) {
        od::value v;
        if (n.get(v) != simdjson::SUCCESS) return std::nullopt;
        std::string_view token = v.raw_json_token();
        if (token.substr(0, 2) == "-0") {
          return make_error(error_code::invalid_header_deserialization,
                            fmt::format("invalid JSON in header: tensor '{}': {}: invalid type: floating point `-0`, "
                                        "expected a non-negative integer",
                                        tensor, key),
                            std::nullopt, tensor);
        }
      }
    }
  }
  return std::nullopt;
}

namespace {

error number_out_of_range(std::size_t at) {
  return make_error(error_code::invalid_header_deserialization,
                    fmt::format("invalid JSON in header: number out of range at header byte {}", at), 8 + at);
}

}  // namespace

/// serde_json's verdict on the number tokens of `text`: the first one it reads as out of
/// range. Runs only when an ignored field holds a float.
std::optional<error> check_number_range(std::string_view text) {
  std::optional<error> found;
  for_each_number_token(text, [&](std::size_t at, std::string_view token) {
    if (!found && classify_serde_number(token) == serde_number::out_of_range) {
      found = number_out_of_range(at);
    }
  });
  return found;
}

/// simdjson's DOM rejects integers beyond 64 bits (NUMBER_ERROR), and a few floats that
/// serde_json reads as finite; serde_json takes both as floats. This copy of `text` spells
/// every number serde_json reads as a float `0.0` padded with spaces to its length (the
/// schema only asks whether a number is a float, and offsets stay put), so the DOM then
/// reads it as the reference does. Numbers out of serde_json's range are left as they are:
/// the DOM rejects some, `check_number_range` the others, after the walk as on the
/// ordinary path, so which stage-5 error wins does not depend on this detour.
std::string respell_floats(std::string_view text) {
  std::string copy(text);
  for_each_number_token(text, [&](std::size_t at, std::string_view token) {
    if (token.size() >= 3 && classify_serde_number(token) == serde_number::floating) {
      copy.replace(at, token.size(), token.size(), ' ');  // `-0` (2 bytes) is read alike anyway
      copy.replace(at, 3, "0.0");
    }
  });
  return copy;
}

}  // namespace safetensors::detail
