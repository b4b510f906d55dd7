// SPDX-License-Identifier: Apache-2.0
// Parsing a tensor-parallel plan: a JSON object of pattern -> rule, in document order.
#include <algorithm>

#include <fmt/format.h>
#include <simdjson.h>

#include "json/json_keys.h"
#include "json/json_words.h"
#include "safetensors/distributed/tensor_parallel.h"

namespace safetensors {
namespace {

namespace dom = simdjson::dom;

constexpr std::size_t max_plan_depth = 16;

error plan_error(std::string message) {
  return make_error(error_code::invalid_argument, "tensor-parallel plan: " + std::move(message));
}

std::optional<tp_split> split_named(std::string_view name) {
  if (name == "column") return tp_split::column;
  if (name == "row") return tp_split::row;
  if (name == "replicate") return tp_split::replicate;
  return std::nullopt;
}

error unknown_split(std::string_view pattern, std::string_view name) {
  return plan_error(fmt::format("rule '{}': unknown split '{}' (expected column, row or replicate)", pattern, name));
}

/// {"split": ..., "dim": N} or a bare split name.
result<tp_rule> parse_rule(std::string_view pattern, dom::element value) {
  tp_rule rule;
  rule.pattern = std::string(pattern);
  if (value.type() == dom::element_type::STRING) {
    const std::string_view name = value.get_string().value_unsafe();
    const auto split = split_named(name);
    if (!split) return unknown_split(pattern, name);
    rule.split = *split;
    return rule;
  }
  if (value.type() != dom::element_type::OBJECT) {
    return plan_error(
        fmt::format("rule '{}' is not an object like {{\"split\": \"column\", \"dim\": 0}} "
                    "nor a split name",
                    pattern));
  }
  bool has_split = false;
  dom::object fields = value.get_object().value_unsafe();
  for (dom::key_value_pair kv : fields) {
    if (kv.key == "split") {
      if (kv.value.type() != dom::element_type::STRING) {
        return plan_error(fmt::format("rule '{}': split is not a string", pattern));
      }
      const std::string_view name = kv.value.get_string().value_unsafe();
      const auto split = split_named(name);
      if (!split) return unknown_split(pattern, name);
      rule.split = *split;
      has_split = true;
    } else if (kv.key == "dim") {
      if (kv.value.type() == dom::element_type::INT64) {
        rule.dim = kv.value.get_int64().value_unsafe();
      } else if (kv.value.type() == dom::element_type::UINT64) {
        return plan_error(fmt::format("rule '{}': dim {} is too large", pattern, kv.value.get_uint64().value_unsafe()));
      } else {
        return plan_error(fmt::format("rule '{}': dim {} is not an integer", pattern, simdjson::minify(kv.value)));
      }
    } else {
      return plan_error(fmt::format("rule '{}': unknown key '{}' (expected split, dim)", pattern, kv.key));
    }
  }
  if (!has_split) return plan_error(fmt::format("rule '{}' has no split", pattern));
  if (rule.split == tp_split::replicate && rule.dim) {
    return plan_error(fmt::format("rule '{}': a replicated tensor has no dim", pattern));
  }
  return rule;
}

}  // namespace

std::string_view tp_split_name(tp_split split) noexcept {
  switch (split) {
    case tp_split::column: return "column";
    case tp_split::row: return "row";
    case tp_split::replicate: return "replicate";
  }
  return "?";
}

result<tp_plan> parse_tp_plan(std::string_view json) {
  if (json.empty()) return plan_error("empty text (an empty plan is {})");
  dom::parser parser;
  if (auto err = parser.allocate(std::max<std::size_t>(json.size(), 64), max_plan_depth); err != simdjson::SUCCESS) {
    return plan_error(fmt::format("cannot parse: {}", simdjson::error_message(err)));
  }
  dom::element root;
  if (auto err = parser.parse(json.data(), json.size(), true).get(root); err != simdjson::SUCCESS) {
    return plan_error(fmt::format("invalid JSON: {}", detail::json_error_words(err, json)));
  }
  if (auto dup = detail::find_duplicate_key_deep(root)) {
    return make_error(error_code::duplicate_key, fmt::format("tensor-parallel plan: duplicate key '{}'", *dup));
  }
  if (root.type() != dom::element_type::OBJECT) {
    return plan_error("the plan is not a JSON object of name pattern -> rule");
  }
  tp_plan plan;
  dom::object rules = root.get_object().value_unsafe();
  for (dom::key_value_pair kv : rules) {
    if (kv.key.empty()) return plan_error("a rule has an empty name pattern");
    auto rule = parse_rule(kv.key, kv.value);
    if (!rule) return std::move(rule).err();
    plan.rules.push_back(std::move(rule).value());
  }
  return plan;
}

}  // namespace safetensors
