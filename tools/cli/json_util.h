// SPDX-License-Identifier: Apache-2.0
// Small JSON-writing helpers shared by the subcommands (strings use safetensors::json_quote).
#pragma once

#include <cmath>
#include <span>
#include <string>

#include <fmt/format.h>

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

}  // namespace st_cli
