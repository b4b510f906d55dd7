// SPDX-License-Identifier: Apache-2.0
// Duplicate-key detection for simdjson DOM objects.
#include "json/json_keys.h"

#include <algorithm>
#include <array>
#include <vector>

namespace safetensors::detail {

namespace dom = simdjson::dom;

std::optional<std::string_view> find_duplicate_key(dom::object obj) {
  const std::size_t n = obj.size();
  if (n < 2) return std::nullopt;
  if (n <= 16) {
    // Quadratic beats sorting for the small objects that dominate; on the stack, no allocation.
    std::array<std::string_view, 16> small;
    std::size_t seen = 0;
    for (dom::key_value_pair kv : obj) {
      for (std::size_t j = 0; j < seen; ++j) {
        if (kv.key == small[j]) return kv.key;
      }
      small[seen++] = kv.key;
    }
    return std::nullopt;
  }
  std::vector<std::string_view> keys;
  keys.reserve(n);
  for (dom::key_value_pair kv : obj) keys.push_back(kv.key);
  std::sort(keys.begin(), keys.end());
  auto it = std::adjacent_find(keys.begin(), keys.end());
  if (it != keys.end()) return *it;
  return std::nullopt;
}

std::optional<std::string_view> find_duplicate_key_deep(dom::element value) {
  if (value.type() == dom::element_type::OBJECT) {
    dom::object obj = value.get_object().value_unsafe();
    if (auto dup = find_duplicate_key(obj)) return dup;
    for (dom::key_value_pair kv : obj) {
      if (auto dup = find_duplicate_key_deep(kv.value)) return dup;
    }
  } else if (value.type() == dom::element_type::ARRAY) {
    dom::array items = value.get_array().value_unsafe();
    for (dom::element item : items) {
      if (auto dup = find_duplicate_key_deep(item)) return dup;
    }
  }
  return std::nullopt;
}

}  // namespace safetensors::detail
