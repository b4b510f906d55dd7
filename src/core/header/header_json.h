// SPDX-License-Identifier: Apache-2.0
// Internal: the compact header JSON shared by the writer and header_to_json.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <fmt/format.h>

#include "json/json_escape.h"
#include "safetensors/header.h"

namespace safetensors::detail {

/// `entries` are any records with name, type, shape, begin and end, in file order; names and
/// metadata are quoted by `append_string` (the writer's serde_json escaping by default).
template <class Entry>
std::string header_json(std::span<const Entry> entries, const std::optional<metadata_map>& metadata,
                        void (*append_string)(std::string&, std::string_view) = append_json_string) {
  std::string json = "{";
  bool first = true;
  if (metadata) {
    json += "\"__metadata__\":{";
    bool first_key = true;
    for (const auto& [k, v] : *metadata) {
      if (!first_key) json.push_back(',');
      first_key = false;
      append_string(json, k);
      json.push_back(':');
      append_string(json, v);
    }
    json.push_back('}');
    first = false;
  }
  for (const Entry& t : entries) {
    if (!first) json.push_back(',');
    first = false;
    append_string(json, t.name);
    json += fmt::format(":{{\"dtype\":\"{}\",\"shape\":[{}],\"data_offsets\":[{},{}]}}", dtype_name(t.type),
                        fmt::join(t.shape, ","), t.begin, t.end);
  }
  json.push_back('}');
  return json;
}

}  // namespace safetensors::detail
