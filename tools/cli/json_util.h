// SPDX-License-Identifier: Apache-2.0
// Small JSON-writing helpers shared by the subcommands (strings use safetensors::json_quote).
#pragma once

#include <cmath>
#include <span>
#include <string>

#include <fmt/format.h>

#include "safetensors/header.h"
#include "safetensors/json_text.h"

namespace st_cli {

/// Shortest round-trip text of `v`; JSON has no NaN or infinity, so those become null.
inline std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : std::string("null"); }

/// ["a","b"]
template <class Strings>
std::string json_string_array(const Strings& items) {
  std::string out = "[";
  for (const auto& s : items) {
    if (out.size() > 1) out += ',';
    out += safetensors::json_quote(s);
  }
  return out + "]";
}

/// The header as header_to_json writes it, but with json_quote's escaping: header_to_json keeps
/// the writer's (serde_json's) bytes, which leave DEL, C1 and bidirectional controls raw.
inline std::string header_display_json(const safetensors::header& h) {
  std::string out = "{";
  if (h.metadata()) {
    out += R"("__metadata__":{)";
    bool first = true;
    for (const auto& [k, v] : *h.metadata()) {
      if (!first) out += ',';
      first = false;
      out += safetensors::json_quote(k) + ':' + safetensors::json_quote(v);
    }
    out += '}';
  }
  for (const auto& t : h.tensors()) {
    if (out.size() > 1) out += ',';
    out += fmt::format(R"({}:{{"dtype":"{}","shape":[{}],"data_offsets":[{},{}]}})", safetensors::json_quote(t.name),
                       safetensors::dtype_name(t.type), fmt::join(t.shape, ","), t.begin, t.end);
  }
  return out + '}';
}

}  // namespace st_cli
