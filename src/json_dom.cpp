// SPDX-License-Identifier: Apache-2.0
// Duplicate-key detection for simdjson DOM objects (simdjson keeps every duplicate).
#include "json_dom.h"

#include <algorithm>
#include <vector>

namespace safetensors::detail {

std::optional<std::string_view> find_duplicate_key(simdjson::dom::object obj) {
  const std::size_t n = obj.size();
  if (n < 2) return std::nullopt;
  std::vector<std::string_view> keys;
  keys.reserve(n);
  for (simdjson::dom::key_value_pair kv : obj) keys.push_back(kv.key);
  if (n <= 16) {
    for (std::size_t i = 1; i < n; ++i) {
      for (std::size_t j = 0; j < i; ++j) {
        if (keys[i] == keys[j]) return keys[i];
      }
    }
    return std::nullopt;
  }
  std::sort(keys.begin(), keys.end());
  auto it = std::adjacent_find(keys.begin(), keys.end());
  if (it != keys.end()) return *it;
  return std::nullopt;
}

}  // namespace safetensors::detail
