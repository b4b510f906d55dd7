// SPDX-License-Identifier: Apache-2.0
// Parsing the checkpoint index JSON: schema walk over a simdjson DOM, duplicates refused.
#include <algorithm>

#include <fmt/format.h>
#include <simdjson.h>

#include "checkpoint/index.h"
#include "json/json_keys.h"
#include "json/json_words.h"
#include "safetensors/readonly_file.h"

namespace safetensors {
namespace {

namespace dom = simdjson::dom;

constexpr std::size_t max_json_depth = 127;

error index_error(std::string message, std::optional<std::string> tensor = std::nullopt) {
  return make_error(error_code::invalid_index, "invalid checkpoint index: " + std::move(message), std::nullopt,
                    std::move(tensor));
}

std::optional<std::uint64_t> as_size(dom::element e) {
  switch (e.type()) {
    case dom::element_type::UINT64: return e.get_uint64().value_unsafe();
    case dom::element_type::INT64: {
      const std::int64_t v = e.get_int64().value_unsafe();
      if (v >= 0) return static_cast<std::uint64_t>(v);
      return std::nullopt;
    }
    case dom::element_type::DOUBLE: {
      // Some writers emit 1.34e10: accept integral values that doubles hold exactly.
      const double d = e.get_double().value_unsafe();
      if (d >= 0 && d <= 9007199254740992.0 && d == static_cast<double>(static_cast<std::uint64_t>(d))) {
        return static_cast<std::uint64_t>(d);
      }
      return std::nullopt;
    }
    default: return std::nullopt;
  }
}

}  // namespace

result<checkpoint_index> parse_checkpoint_index(std::span<const std::byte> json) {
  const char* text = reinterpret_cast<const char*>(json.data());
  if (json.empty()) return index_error("the index is empty");  // simdjson must not see a null buffer
  dom::parser parser;
  if (auto err = parser.allocate(std::max<std::size_t>(json.size(), 64), max_json_depth); err != simdjson::SUCCESS) {
    return make_error(error_code::io, fmt::format("cannot allocate JSON parser: {}", simdjson::error_message(err)));
  }
  dom::element root;
  if (auto err = parser.parse(text, json.size(), true).get(root); err != simdjson::SUCCESS) {
    return index_error(detail::json_error_words(err, {text, json.size()}));
  }
  if (auto dup = detail::find_duplicate_key_deep(root)) {
    return make_error(error_code::duplicate_key, fmt::format("duplicate key '{}' in the checkpoint index", *dup));
  }
  if (root.type() != dom::element_type::OBJECT) return index_error("the top level is not an object");
  checkpoint_index out;
  bool has_map = false;
  dom::object top = root.get_object().value_unsafe();
  for (dom::key_value_pair kv : top) {
    if (kv.key == "weight_map") {
      if (kv.value.type() != dom::element_type::OBJECT) return index_error("weight_map is not an object");
      has_map = true;
      dom::object map = kv.value.get_object().value_unsafe();
      for (dom::key_value_pair entry : map) {
        if (entry.value.type() != dom::element_type::STRING) {
          return index_error(fmt::format("weight_map['{}'] is not a shard file name string", entry.key),
                             std::string(entry.key));
        }
        out.weight_map.emplace_back(std::string(entry.key), std::string(entry.value.get_string().value_unsafe()));
      }
    } else if (kv.key == "metadata") {
      if (kv.value.type() == dom::element_type::NULL_VALUE) continue;
      if (kv.value.type() != dom::element_type::OBJECT) return index_error("metadata is not an object");
      dom::object meta = kv.value.get_object().value_unsafe();
      for (dom::key_value_pair m : meta) {
        if (m.key == "total_size") {
          auto size = as_size(m.value);
          if (!size) return index_error("metadata.total_size is not a non-negative integer");
          out.total_size = size;
        }
        std::string value = m.value.type() == dom::element_type::STRING
                                ? std::string(m.value.get_string().value_unsafe())
                                : simdjson::minify(m.value);
        out.metadata.emplace(std::string(m.key), std::move(value));
      }
    }
    // Other top-level keys are ignored (already checked for duplicates).
  }
  if (!has_map) return index_error("weight_map is missing");
  std::sort(out.weight_map.begin(), out.weight_map.end());
  return out;
}

result<checkpoint_index> read_checkpoint_index(const std::string& path, std::uint64_t max_bytes) {
  auto text = readonly_file::read_all(path, max_bytes, "the index");
  if (!text) return std::move(text).err();
  auto parsed = parse_checkpoint_index(std::as_bytes(std::span(text->data(), text->size())));
  if (!parsed) {
    return std::move(parsed).err().with_path(path);
  }
  return parsed;
}

}  // namespace safetensors
