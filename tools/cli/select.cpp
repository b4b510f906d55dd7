// SPDX-License-Identifier: Apache-2.0
#include "select.h"

#include <algorithm>

#include "safetensors/glob.h"
#include "safetensors/pipeline/tensor_filter.h"

namespace st_cli {

bool any_matches(const std::vector<std::string>& patterns, std::string_view name) {
  return std::any_of(patterns.begin(), patterns.end(),
                     [&](const std::string& p) { return safetensors::name_matches(p, name); });
}

safetensors::status require_matches(std::span<const safetensors::tensor_info> tensors,
                                    const std::vector<std::string>& only, const std::vector<std::string>& exclude,
                                    const std::string& path) {
  std::vector<std::string_view> names;
  names.reserve(tensors.size());
  for (const auto& t : tensors) names.push_back(t.name);
  return require_matches(names, only, exclude, path);
}

safetensors::status require_matches(std::span<const std::string_view> names, const std::vector<std::string>& only,
                                    const std::vector<std::string>& exclude, const std::string& path) {
  return safetensors::pipeline::tensor_filter{only, exclude}.require_matches(names, path);
}

safetensors::result<std::vector<const safetensors::tensor_info*>> select_tensors(
    const safetensors::file& f, const std::vector<std::string>& only, const std::vector<std::string>& exclude) {
  if (auto s = require_matches(f.tensors(), only, exclude, f.path()); !s) return std::move(s).err();
  std::vector<const safetensors::tensor_info*> out;
  const safetensors::pipeline::tensor_filter filter{only, exclude};
  for (const auto& t : f.tensors()) {
    if (filter.selects(t.name)) out.push_back(&t);
  }
  return out;
}

}  // namespace st_cli
