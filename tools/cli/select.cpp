// SPDX-License-Identifier: Apache-2.0
#include "select.h"

#include <algorithm>

#include <fmt/format.h>

#include "safetensors/glob.h"

namespace st_cli {

bool name_matches(const std::string& pattern, std::string_view name) {
  return pattern == name || safetensors::glob_match(pattern, name);
}

safetensors::result<std::vector<const safetensors::tensor_info*>> select_tensors(
    const safetensors::file& f, const std::vector<std::string>& only, const std::vector<std::string>& exclude) {
  for (const auto& pattern : only) {
    const auto tensors = f.tensors();
    if (std::none_of(tensors.begin(), tensors.end(), [&](const auto& t) { return name_matches(pattern, t.name); })) {
      safetensors::error e = safetensors::make_error(safetensors::error_code::tensor_not_found,
                                                     fmt::format("no tensor matches '{}'", pattern));
      e.path = f.path();
      return e;
    }
  }
  std::vector<const safetensors::tensor_info*> out;
  for (const auto& t : f.tensors()) {
    const auto match = [&](const std::string& p) { return name_matches(p, t.name); };
    if (!only.empty() && std::none_of(only.begin(), only.end(), match)) continue;
    if (std::any_of(exclude.begin(), exclude.end(), match)) continue;
    out.push_back(&t);
  }
  return out;
}

}  // namespace st_cli
