// SPDX-License-Identifier: Apache-2.0
#include "header/dom_walk.h"

#include <algorithm>
#include <array>
#include <optional>
#include <string>

#include <fmt/format.h>

#include "header/fixed_key.h"
#include "header/header_builder.h"
#include "header/serde_fixups.h"
#include "json/json_keys.h"
#include "json/json_words.h"
#include "json/utf8.h"

namespace safetensors::detail {
namespace {

namespace dom = simdjson::dom;

// serde_json's recursion limit: it counts every array and object as it opens, empty or
// not, and fails on the 128th nested one (the top-level object is the first).
constexpr std::size_t serde_max_nesting = 127;
// simdjson counts only non-empty containers and fails when the count reaches its limit,
// so with 128 it accepts 127 non-empty levels; an empty one at level 128 it lets through,
// and the walk over ignored values rejects it (nothing else can nest that deep).
constexpr std::size_t simdjson_max_depth = serde_max_nesting + 1;

error json_error(std::string message, std::optional<std::string> tensor = std::nullopt) {
  return make_error(error_code::invalid_header_deserialization, "invalid JSON in header: " + message, std::nullopt,
                    std::move(tensor));
}

std::string_view type_word(dom::element_type t) {
  switch (t) {
    case dom::element_type::ARRAY: return "a sequence";
    case dom::element_type::OBJECT: return "a map";
    case dom::element_type::INT64:
    case dom::element_type::UINT64: return "an integer";
    case dom::element_type::DOUBLE: return "a floating point number";
    case dom::element_type::STRING: return "a string";
    case dom::element_type::BOOL: return "a boolean";
    case dom::element_type::NULL_VALUE: return "null";
  }
  return "a value";
}

std::optional<std::uint64_t> as_u64(dom::element e) {
  if (e.type() == dom::element_type::UINT64) return e.get_uint64().value_unsafe();
  if (e.type() == dom::element_type::INT64) {
    std::int64_t v = e.get_int64().value_unsafe();
    if (v >= 0) return static_cast<std::uint64_t>(v);
  }
  return std::nullopt;
}

class schema_walker {
 public:
  schema_walker(detail::header_builder& out, const parse_options& options)
      : out_(out), policy_(options.policy), caps_(options.effective_limits()) {}

  std::optional<error> walk(dom::element root) {
    if (root.type() != dom::element_type::OBJECT) {
      return json_error(fmt::format("invalid type: {}, expected a map of tensors", type_word(root.type())));
    }
    dom::object top = root.get_object().value_unsafe();
    out_.tensors.reserve(top.size());
    out_.dims.reserve(2 * top.size());  // most tensors have rank <= 2
    bool metadata_seen = false;
    std::uint64_t tensor_count = 0;
    for (dom::key_value_pair kv : top) {
      if (is_key<"__metadata__">(kv.key)) {
        if (metadata_seen) {
          return make_error(error_code::duplicate_key, "duplicate key '__metadata__'");
        }
        metadata_seen = true;
        if (auto e = read_metadata(kv.value)) return e;
        continue;
      }
      if (++tensor_count > caps_.max_tensors) {
        return limit_error(fmt::format("more than {} tensors", caps_.max_tensors), kv.key);
      }
      if (kv.key.size() > caps_.max_name_bytes) {
        return limit_error(
            fmt::format("tensor name of {} bytes exceeds the {}-byte limit", kv.key.size(), caps_.max_name_bytes),
            kv.key);
      }
      if (auto e = read_tensor(kv.key, kv.value)) return e;
    }
    return std::nullopt;
  }

  /// True when an ignored field held a float: serde_json's range for it must be checked
  /// on the text, since the DOM keeps only simdjson's (exact) reading.
  [[nodiscard]] bool saw_ignored_float() const noexcept { return saw_ignored_float_; }

 private:
  /// A value nobody reads (an unknown field): serde_json still parses it, so duplicate
  /// keys (ours), its nesting limit and its number range apply. `level` is the nesting
  /// level of `value` with the top-level object at 1.
  std::optional<error> check_ignored_value(dom::element value, std::string_view tensor, std::size_t level) {
    const dom::element_type type = value.type();
    if (type == dom::element_type::DOUBLE) saw_ignored_float_ = true;
    if (type != dom::element_type::OBJECT && type != dom::element_type::ARRAY) return std::nullopt;
    if (level > serde_max_nesting) {
      return json_error(
          fmt::format("tensor '{}': recursion limit exceeded (more than {} nested levels)", tensor, serde_max_nesting),
          std::string(tensor));
    }
    if (type == dom::element_type::ARRAY) {
      dom::array items = value.get_array().value_unsafe();
      for (dom::element item : items) {
        if (auto e = check_ignored_value(item, tensor, level + 1)) return e;
      }
      return std::nullopt;
    }
    dom::object obj = value.get_object().value_unsafe();
    if (auto dup = find_duplicate_key(obj)) {
      return make_error(error_code::duplicate_key, fmt::format("duplicate key '{}' in an ignored field", *dup),
                        std::nullopt, std::string(tensor));
    }
    for (dom::key_value_pair kv : obj) {
      if (auto e = check_ignored_value(kv.value, tensor, level + 1)) return e;
    }
    return std::nullopt;
  }

  static error limit_error(std::string what, std::string_view tensor = {}) {
    return make_error(error_code::limit_exceeded, "limit exceeded: " + std::move(what), std::nullopt,
                      tensor.empty() ? std::nullopt : std::optional<std::string>(tensor));
  }

  std::optional<error> read_metadata(dom::element value) {
    if (value.type() == dom::element_type::NULL_VALUE) return std::nullopt;
    if (value.type() != dom::element_type::OBJECT) {
      return json_error(
          fmt::format("__metadata__: invalid type: {}, expected a map of strings", type_word(value.type())));
    }
    dom::object obj = value.get_object().value_unsafe();
    if (auto dup = find_duplicate_key(obj)) {
      return make_error(error_code::duplicate_key, fmt::format("duplicate key '{}' in __metadata__", *dup));
    }
    metadata_map map;
    std::uint64_t bytes = 0;
    for (dom::key_value_pair kv : obj) {
      if (kv.value.type() != dom::element_type::STRING) {
        return json_error(
            fmt::format("__metadata__['{}']: invalid type: {}, expected a string", kv.key, type_word(kv.value.type())));
      }
      std::string_view v = kv.value.get_string().value_unsafe();
      bytes += kv.key.size() + v.size();
      if (bytes > caps_.max_metadata_bytes) {
        return limit_error(fmt::format("__metadata__ exceeds {} bytes", caps_.max_metadata_bytes));
      }
      map.emplace(std::string(kv.key), std::string(v));
    }
    out_.metadata = std::move(map);
    return std::nullopt;
  }

  std::optional<error> read_tensor(std::string_view name, dom::element value) {
    if (value.type() != dom::element_type::OBJECT) {
      return json_error(
          fmt::format("tensor '{}': invalid type: {}, expected a tensor entry object", name, type_word(value.type())),
          std::string(name));
    }
    dom::object entry = value.get_object().value_unsafe();
    // One left-to-right pass, as serde's derived visitor reads an entry: each field is read
    // when met and a repeated key fails where it repeats. Known fields are tracked by bits,
    // other keys (rare) in a list; an entry too big for that list is checked whole first.
    constexpr std::size_t max_listed_keys = 16;
    const bool many_fields = entry.size() > max_listed_keys;
    if (many_fields) {
      if (auto dup = find_duplicate_key(entry)) return duplicate_field(name, *dup);
    }
    std::vector<std::string_view> other_keys;
    unsigned seen = 0;  // bits of the known fields met so far
    tensor_info raw;
    raw.name = name;
    for (dom::key_value_pair kv : entry) {
      const field_kind kind = classify(kv.key);
      if (kind == field_kind::other) {
        if (!many_fields) {
          if (std::find(other_keys.begin(), other_keys.end(), kv.key) != other_keys.end()) {
            return duplicate_field(name, kv.key);
          }
          other_keys.push_back(kv.key);
        }
        if (policy_ == validation_policy::strict) {
          return make_error(error_code::unknown_field, fmt::format("unknown field '{}' in tensor entry", kv.key),
                            std::nullopt, std::string(name));
        }
        if (auto e = check_ignored_value(kv.value, name, 3)) return e;  // top object, entry, field
        continue;
      }
      const unsigned bit = 1U << static_cast<unsigned>(kind);
      if ((seen & bit) != 0) return duplicate_field(name, kv.key);
      seen |= bit;
      if (kind == field_kind::dtype) {
        if (kv.value.type() != dom::element_type::STRING) {
          return json_error(fmt::format("tensor '{}': dtype: invalid type: {}, expected a dtype name", name,
                                        type_word(kv.value.type())),
                            std::string(name));
        }
        std::string_view text = kv.value.get_string().value_unsafe();
        if (text.empty() || text != last_dtype_text_) {  // files hold few dtypes: skip the table scan
          auto t = parse_dtype(text);
          if (!t) return json_error(fmt::format("tensor '{}': unknown dtype '{}'", name, text), std::string(name));
          last_dtype_text_ = text;
          last_dtype_ = *t;
        }
        raw.type = last_dtype_;
      } else if (kind == field_kind::shape) {
        if (auto e = read_shape(name, kv.value, raw)) return e;
      } else if (auto e = read_offsets(name, kv.value, raw)) {
        return e;
      }
    }
    auto has = [seen](field_kind k) { return (seen & (1U << static_cast<unsigned>(k))) != 0; };
    const bool has_dtype = has(field_kind::dtype);
    const bool has_shape = has(field_kind::shape);
    const bool has_offsets = has(field_kind::data_offsets);
    for (auto [present, field] :
         {std::pair{has_dtype, "dtype"}, std::pair{has_shape, "shape"}, std::pair{has_offsets, "data_offsets"}}) {
      if (!present) return json_error(fmt::format("tensor '{}': missing field `{}`", name, field), std::string(name));
    }
    out_.tensors.push_back(raw);
    return std::nullopt;
  }

  std::optional<error> read_shape(std::string_view name, dom::element value, tensor_info& raw) {
    if (value.type() != dom::element_type::ARRAY) {
      return json_error(
          fmt::format("tensor '{}': shape: invalid type: {}, expected a sequence", name, type_word(value.type())),
          std::string(name));
    }
    dom::array dims = value.get_array().value_unsafe();
    if (dims.size() > caps_.max_rank) {
      return limit_error(fmt::format("rank {} exceeds the limit of {}", dims.size(), caps_.max_rank), name);
    }
    const std::size_t at = out_.dims.size();
    for (dom::element d : dims) {
      auto v = as_u64(d);
      if (!v) {
        return json_error(fmt::format("tensor '{}': shape: invalid value: {}, expected a non-negative integer", name,
                                      type_word(d.type())),
                          std::string(name));
      }
      out_.dims.push_back(*v);
    }
    raw.shape = std::span<const std::uint64_t>(out_.dims).subspan(at);
    return std::nullopt;
  }

  static std::optional<error> read_offsets(std::string_view name, dom::element value, tensor_info& raw) {
    if (value.type() != dom::element_type::ARRAY) {
      return json_error(fmt::format("tensor '{}': data_offsets: invalid type: {}, expected a sequence", name,
                                    type_word(value.type())),
                        std::string(name));
    }
    dom::array pair = value.get_array().value_unsafe();
    if (pair.size() != 2) {
      return json_error(fmt::format("tensor '{}': data_offsets: invalid length {}, expected 2", name, pair.size()),
                        std::string(name));
    }
    std::uint64_t both[2] = {0, 0};
    int i = 0;
    for (dom::element d : pair) {
      auto v = as_u64(d);
      if (!v) {
        return json_error(fmt::format("tensor '{}': data_offsets: invalid value: {}, expected a non-negative "
                                      "integer",
                                      name, type_word(d.type())),
                          std::string(name));
      }
      both[i++] = *v;
    }
    raw.begin = both[0];
    raw.end = both[1];
    return std::nullopt;
  }

  enum class field_kind : std::uint8_t { dtype, shape, data_offsets, other };

  static field_kind classify(std::string_view key) noexcept {
    if (is_key<"dtype">(key)) return field_kind::dtype;
    if (is_key<"shape">(key)) return field_kind::shape;
    if (is_key<"data_offsets">(key)) return field_kind::data_offsets;
    return field_kind::other;
  }

  static error duplicate_field(std::string_view tensor, std::string_view key) {
    return make_error(error_code::duplicate_key, fmt::format("duplicate field '{}' in tensor entry", key), std::nullopt,
                      std::string(tensor));
  }

  detail::header_builder& out_;
  validation_policy policy_;
  limits caps_;
  std::string_view last_dtype_text_;  // the last dtype name parsed (never "")
  dtype last_dtype_ = dtype::U8;
  bool saw_ignored_float_ = false;
};

}  // namespace

result<header> dom_walk(dom::parser& parser, const char* text, std::size_t n, std::uint64_t file_size,
                        const parse_options& options) {
  // The DOM parse validates UTF-8 itself, so the separate scan (which finds the position
  // and takes precedence over JSON errors) only runs when something failed.
  auto utf8_error = [&]() -> std::optional<error> {
    if (auto bad = first_invalid_utf8(std::string_view(text, n))) {
      return make_error(error_code::invalid_header, fmt::format("invalid UTF-8 in header at header byte {}", *bad),
                        8 + *bad);
    }
    return std::nullopt;
  };
  if (std::max<std::size_t>(n, 64) > parser.capacity() || parser.max_depth() != simdjson_max_depth) {
    if (auto err = parser.allocate(std::max<std::size_t>(n, 64), simdjson_max_depth); err != simdjson::SUCCESS) {
      if (auto e = utf8_error()) return std::move(*e);
      return make_error(error_code::io, fmt::format("cannot allocate JSON parser: {}", simdjson::error_message(err)));
    }
  }
  dom::element root;
  std::string_view json(text, n);
  std::string respelled;  // the DOM copies strings out, so this need only outlive the parse
  auto err = parser.parse(text, n, false).get(root);
  if (err == simdjson::NUMBER_ERROR) {
    respelled = respell_floats(json);
    json = respelled;
    err = parser.parse(respelled.data(), respelled.size(), true).get(root);
  }
  if (err != simdjson::SUCCESS) {
    if (auto e = utf8_error()) return std::move(*e);
    if (err == simdjson::NUMBER_ERROR) {
      if (auto e = check_number_range(json)) return std::move(*e);  // says where
    }
    return json_error(json_error_words(err, json));
  }
  header_builder builder;
  schema_walker walker(builder, options);
  if (auto e = walker.walk(root)) return std::move(*e);
  if (walker.saw_ignored_float()) {
    if (auto e = check_number_range(json)) return std::move(*e);
  }
  if (may_contain_negative_zero(json)) {
    if (auto e = find_negative_zero(json)) return std::move(*e);
  }
  return builder.finish(n, file_size, options.policy);
}

}  // namespace safetensors::detail
