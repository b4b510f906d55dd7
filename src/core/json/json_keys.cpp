// SPDX-License-Identifier: Apache-2.0
// Duplicate-key detection for simdjson DOM objects, and over JSON text (json_keys.h).
#include "json/json_keys.h"
#include "json/json_words.h"

#include "safetensors/json_keys.h"

#include <algorithm>
#include <array>
#include <vector>

namespace dom = simdjson::dom;

namespace safetensors::detail {

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

namespace safetensors {

result<std::optional<std::string>> find_duplicate_json_key(std::string_view json) {
  // An empty view may hold a null pointer, which simdjson's copy must not see.
  if (json.empty()) {
    return make_error(error_code::invalid_header_deserialization, simdjson::error_message(simdjson::EMPTY));
  }
  dom::parser parser;
  dom::element root;
  if (auto err = parser.parse(json.data(), json.size(), true).get(root); err != simdjson::SUCCESS) {
    return make_error(error_code::invalid_header_deserialization, detail::json_error_words(err, json));
  }
  if (auto dup = detail::find_duplicate_key_deep(root)) return std::optional<std::string>(*dup);
  return std::optional<std::string>{};
}

}  // namespace safetensors
