// SPDX-License-Identifier: Apache-2.0
// GGUF metadata values as text and back (gguf_metadata.h).
#include <fmt/format.h>
#include <simdjson.h>

#include <algorithm>
#include <bit>
#include <charconv>
#include <cmath>
#include <cstring>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "safetensors/formats/gguf_metadata.h"
#include "safetensors/json_text.h"

namespace safetensors::gguf {
namespace {

template <class T>
using bits_of =
    std::conditional_t<sizeof(T) == 1, std::uint8_t,
                       std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                          std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;

template <class T>
[[nodiscard]] T packed_at(const array_value& a, std::size_t i) noexcept {
  bits_of<T> bits = 0;
  for (std::size_t b = 0; b < sizeof(T); ++b) {
    bits = static_cast<bits_of<T>>(
        bits | (static_cast<bits_of<T>>(std::to_integer<std::uint8_t>(a.packed[i * sizeof(T) + b])) << (8 * b)));
  }
  if constexpr (std::is_same_v<T, bool>) {
    return bits != 0;
  } else {
    return std::bit_cast<T>(bits);
  }
}

template <class T>
void append_packed(std::vector<std::byte>& out, T v) {
  bits_of<T> bits = 0;
  if constexpr (std::is_same_v<T, bool>) {
    bits = v ? 1 : 0;
  } else {
    bits = std::bit_cast<bits_of<T>>(v);
  }
  const auto wide = static_cast<std::uint64_t>(bits);  // bool's bits would shift as a signed int
  for (std::size_t b = 0; b < sizeof(T); ++b) out.push_back(static_cast<std::byte>((wide >> (8 * b)) & 0xFFU));
}

template <class T>
[[nodiscard]] std::string number_text(T v) {
  if constexpr (std::is_same_v<T, bool>) {
    return v ? "true" : "false";
  } else if constexpr (std::is_floating_point_v<T>) {
    char buf[64];
    const auto end = std::to_chars(buf, buf + sizeof buf, v).ptr;
    return {buf, end};
  } else {
    return std::to_string(v);
  }
}

// Inside JSON arrays non-finite floats have no number form: they are quoted.
template <class T>
[[nodiscard]] std::string json_number(T v) {
  if constexpr (std::is_floating_point_v<T>) {
    if (!std::isfinite(v)) return '"' + number_text(v) + '"';
  }
  return number_text(v);
}

template <class T>
void array_json(const array_value& a, std::string& out) {
  for (std::size_t i = 0; i < a.size(); ++i) {
    if (i != 0) out += ',';
    out += json_number(packed_at<T>(a, i));
  }
}

// Calls f(T{}) with the C++ type of a fixed-size value type.
template <class F>
decltype(auto) with_number_type(value_type t, F&& f) {
  switch (t) {
    case value_type::uint8: return f(std::uint8_t{});
    case value_type::int8: return f(std::int8_t{});
    case value_type::uint16: return f(std::uint16_t{});
    case value_type::int16: return f(std::int16_t{});
    case value_type::uint32: return f(std::uint32_t{});
    case value_type::int32: return f(std::int32_t{});
    case value_type::float32: return f(float{});
    case value_type::boolean: return f(bool{});
    case value_type::uint64: return f(std::uint64_t{});
    case value_type::int64: return f(std::int64_t{});
    default: return f(double{});
  }
}

[[nodiscard]] error bad_text(std::string_view tag, std::string_view text) {
  return make_error(error_code::invalid_argument, fmt::format("'{}{}' is not a valid {} value", text.substr(0, 60),
                                                              text.size() > 60 ? "..." : "", tag));
}

template <class T>
[[nodiscard]] std::optional<T> parse_number(std::string_view text) {
  if constexpr (std::is_same_v<T, bool>) {
    if (text != "true" && text != "false") return std::nullopt;
    return text == "true";
  } else {
    T out{};
    const char* end = text.data() + text.size();
    const auto [ptr, ec] = std::from_chars(text.data(), end, out);
    if (ec != std::errc{} || ptr != end) return std::nullopt;
    return out;
  }
}

[[nodiscard]] std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\n' || s.front() == '\t' || s.front() == '\r'))
    s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\n' || s.back() == '\t' || s.back() == '\r'))
    s.remove_suffix(1);
  return s;
}

// A JSON array of numbers (non-finite floats quoted): split on commas, no nesting.
template <class T>
[[nodiscard]] std::optional<std::vector<std::byte>> parse_number_array(std::string_view text) {
  text = trim(text);
  if (text.size() < 2 || text.front() != '[' || text.back() != ']') return std::nullopt;
  std::string_view body = trim(text.substr(1, text.size() - 2));
  std::vector<std::byte> packed;
  if (body.empty()) return packed;
  for (;;) {
    const std::size_t comma = body.find(',');
    std::string_view token = trim(body.substr(0, comma));
    if constexpr (std::is_floating_point_v<T>) {
      if (token.size() >= 2 && token.front() == '"' && token.back() == '"') token = token.substr(1, token.size() - 2);
    }
    const auto v = parse_number<T>(token);
    if (!v) return std::nullopt;
    append_packed(packed, *v);
    if (comma == std::string_view::npos) return packed;
    body = body.substr(comma + 1);
  }
}

[[nodiscard]] std::optional<std::vector<std::string>> parse_string_array(std::string_view text) {
  simdjson::dom::parser parser;
  const simdjson::padded_string padded(text);
  simdjson::dom::array arr;
  if (parser.parse(padded).get_array().get(arr) != simdjson::SUCCESS) return std::nullopt;
  std::vector<std::string> out;
  for (simdjson::dom::element el : arr) {
    std::string_view s;
    if (el.get_string().get(s) != simdjson::SUCCESS) return std::nullopt;
    out.emplace_back(s);
  }
  return out;
}

/// A type tag: the type, and for ARRAY[...] the element type (else unused).
struct parsed_tag {
  value_type type = value_type::uint8;
  value_type element = value_type::uint8;
};

[[nodiscard]] std::optional<parsed_tag> parse_tag(std::string_view tag) {
  constexpr std::string_view array_prefix = "ARRAY[";
  if (tag.starts_with(array_prefix) && tag.ends_with(']')) {
    const auto element = parse_value_type(tag.substr(array_prefix.size(), tag.size() - array_prefix.size() - 1));
    if (!element || *element == value_type::array) return std::nullopt;
    return parsed_tag{value_type::array, *element};
  }
  const auto type = parse_value_type(tag);
  if (!type || *type == value_type::array) return std::nullopt;
  return parsed_tag{*type, value_type::uint8};
}

}  // namespace

std::string to_text(const value& v) {
  if (const auto* s = std::get_if<std::string>(&v)) return *s;
  if (const auto* a = std::get_if<array_value>(&v)) {
    std::string out = "[";
    if (a->element_type == value_type::string) {
      for (std::size_t i = 0; i < a->strings.size(); ++i) {
        if (i != 0) out += ',';
        out += json_quote(a->strings[i]);
      }
    } else {
      with_number_type(a->element_type, [&](auto tag) { array_json<decltype(tag)>(*a, out); });
    }
    out += ']';
    return out;
  }
  return std::visit(
      [](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_arithmetic_v<T>) {
          return number_text(x);
        } else {
          return {};
        }
      },
      v);
}

std::string type_tag(const value& v) {
  if (const auto* a = std::get_if<array_value>(&v)) {
    return "ARRAY[" + std::string(value_type_name(a->element_type)) + "]";
  }
  return std::string(value_type_name(type_of(v)));
}

result<value> from_text(std::string_view tag, std::string_view text) {
  const auto parsed = parse_tag(tag);
  if (!parsed) return make_error(error_code::invalid_argument, "unknown GGUF value type '" + std::string(tag) + "'");
  const auto [type, element] = *parsed;
  if (type == value_type::string) return value(std::in_place_index<8>, std::string(text));
  if (type == value_type::array) {
    array_value a;
    a.element_type = element;
    if (element == value_type::string) {
      auto strings = parse_string_array(text);
      if (!strings) return bad_text(tag, text);
      a.strings = std::move(*strings);
    } else {
      auto packed = with_number_type(element, [&](auto t) { return parse_number_array<decltype(t)>(text); });
      if (!packed) return bad_text(tag, text);
      a.packed = std::move(*packed);
    }
    return value(std::in_place_index<9>, std::move(a));
  }
  return with_number_type(type, [&](auto t) -> result<value> {
    using T = decltype(t);
    const auto v = parse_number<T>(text);
    if (!v) return bad_text(tag, text);
    return value(std::in_place_type<T>, *v);
  });
}

result<metadata_map> to_safetensors_metadata(std::span<const metadata_entry> metadata) {
  metadata_map out;
  std::string types = "[";
  for (const metadata_entry& e : metadata) {
    if (e.key == types_key) {
      return make_error(error_code::invalid_argument,
                        "the GGUF key '" + e.key + "' is reserved for recording GGUF value types");
    }
    out.emplace(e.key, to_text(e.val));
    if (types.size() > 1) types += ',';
    types += '[' + json_quote(e.key) + ',' + json_quote(type_tag(e.val)) + ']';
  }
  types += ']';
  out.emplace(types_key, std::move(types));
  return out;
}

result<std::vector<metadata_entry>> from_safetensors_metadata(const metadata_map& metadata) {
  std::vector<metadata_entry> out;
  std::set<std::string_view> typed;
  if (const auto it = metadata.find(types_key); it != metadata.end()) {
    auto bad_types = [&](std::string why) {
      return make_error(error_code::invalid_argument, fmt::format("{} in __metadata__: {}", types_key, why));
    };
    simdjson::dom::parser parser;
    const simdjson::padded_string padded(it->second);
    simdjson::dom::array pairs;
    if (parser.parse(padded).get_array().get(pairs) != simdjson::SUCCESS) return bad_types("not a JSON array");
    for (simdjson::dom::element pair : pairs) {
      simdjson::dom::array kv;
      std::string_view key;
      std::string_view tag;
      if (pair.get_array().get(kv) != simdjson::SUCCESS || kv.size() != 2 || kv.at(0).get_string().get(key) ||
          kv.at(1).get_string().get(tag)) {
        return bad_types("entries must be [key, type] string pairs");
      }
      const auto found = metadata.find(key);
      if (found == metadata.end()) return bad_types("lists key '" + std::string(key) + "', which is missing");
      if (!typed.insert(found->first).second) return bad_types("lists key '" + std::string(key) + "' twice");
      result<value> v = from_text(tag, found->second);
      if (!v) {
        error e = std::move(v).err();
        e.message = "metadata key '" + std::string(key) + "': " + e.message;
        return e;
      }
      out.push_back({std::string(key), std::move(v).value()});
    }
  }
  for (const auto& [key, text] : metadata) {
    if (key == types_key || typed.contains(key)) continue;
    out.push_back({key, value(std::in_place_index<8>, text)});
  }
  return out;
}

}  // namespace safetensors::gguf
