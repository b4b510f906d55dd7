// SPDX-License-Identifier: Apache-2.0
// Stages 1-5 of validation: length prefix, UTF-8, and the JSON schema walk over a
// simdjson DOM, the reference walk. Duplicate keys anywhere are rejected (our deviation
// from the reference). Plain headers take faster passes first (header/plain_scan.h, then
// header/ondemand_walk.h), which hand everything else to this walk.
#include <algorithm>
#include <array>
#include <cstring>
#include <memory>
#include <new>

#include <fmt/format.h>
#include <simdjson.h>

#include "header/fixed_key.h"
#include "header/header_builder.h"
#include "header/header_walks.h"
#include "header/ondemand_walk.h"
#include "header/plain_scan.h"
#include "json/json_keys.h"
#include "json/serde_number.h"
#include "json/utf8.h"

namespace safetensors {
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

using detail::find_duplicate_key;

using detail::is_key;

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

/// True when a `-0` integer token may stand where a number can (after `[`, `,`, `:` or
/// whitespace). A cheap filter: strings can contain such text too.
bool may_contain_negative_zero(std::string_view text) {
  for (std::size_t at = text.find("-0"); at != std::string_view::npos; at = text.find("-0", at + 1)) {
    const char next = at + 2 < text.size() ? text[at + 2] : ' ';
    if ((next >= '0' && next <= '9') || next == '.' || next == 'e' || next == 'E') continue;
    std::size_t p = at;
    while (p > 0 && (text[p - 1] == ' ' || text[p - 1] == '\t' || text[p - 1] == '\n' || text[p - 1] == '\r')) --p;
    if (p > 0 && (text[p - 1] == '[' || text[p - 1] == ',' || text[p - 1] == ':')) return true;
  }
  return false;
}

/// simdjson's DOM reads `-0` as the integer 0, serde reads it as a float, so the
/// reference rejects it in a shape or data_offsets. The DOM keeps no source text; this
/// rare path re-reads the raw number tokens of those arrays with the on-demand API.
std::optional<error> find_negative_zero(std::string_view text) {
  namespace od = simdjson::ondemand;
  od::parser parser;
  simdjson::padded_string padded(text);
  od::document doc;
  od::object top;
  if (parser.iterate(padded).get(doc) != simdjson::SUCCESS || doc.get_object().get(top) != simdjson::SUCCESS) {
    return std::nullopt;  // the DOM pass already accepted the text; nothing to add
  }
  for (auto field : top) {
    std::string_view name;
    od::object entry;
    if (field.unescaped_key().get(name) != simdjson::SUCCESS) return std::nullopt;
    const std::string tensor(name);
    if (field.value().get_object().get(entry) != simdjson::SUCCESS) continue;
    for (auto member : entry) {
      std::string_view key;
      od::array numbers;
      if (member.unescaped_key().get(key) != simdjson::SUCCESS) return std::nullopt;
      if ((key != "shape" && key != "data_offsets") || member.value().get_array().get(numbers) != simdjson::SUCCESS) {
        continue;
      }
      for (auto n : numbers) {
        od::value v;
        if (n.get(v) != simdjson::SUCCESS) return std::nullopt;
        std::string_view token = v.raw_json_token();
        if (token.substr(0, 2) == "-0") {
          return json_error(fmt::format("tensor '{}': {}: invalid type: floating point `-0`, expected a "
                                        "non-negative integer",
                                        tensor, key),
                            tensor);
        }
      }
    }
  }
  return std::nullopt;
}

error number_out_of_range(std::size_t at) {
  return make_error(error_code::invalid_header_deserialization,
                    fmt::format("invalid JSON in header: number out of range at header byte {}", at), 8 + at);
}

/// serde_json's verdict on the number tokens of `text`: the first one it reads as out of
/// range. Runs only when an ignored field holds a float.
std::optional<error> check_number_range(std::string_view text) {
  std::optional<error> found;
  detail::for_each_number_token(text, [&](std::size_t at, std::string_view token) {
    if (!found && detail::classify_serde_number(token) == detail::serde_number::out_of_range) {
      found = number_out_of_range(at);
    }
  });
  return found;
}

/// simdjson's DOM rejects integers beyond 64 bits (NUMBER_ERROR), and a few floats that
/// serde_json reads as finite; serde_json takes both as floats. This copy of `text` spells
/// every number serde_json reads as a float `0.0` padded with spaces to its length (the
/// schema only asks whether a number is a float, and offsets stay put), so the DOM then
/// reads it as the reference does. Numbers out of serde_json's range are left as they are:
/// the DOM rejects some, `check_number_range` the others, after the walk as on the
/// ordinary path, so which stage-5 error wins does not depend on this detour.
std::string respell_floats(std::string_view text) {
  std::string copy(text);
  detail::for_each_number_token(text, [&](std::size_t at, std::string_view token) {
    if (token.size() >= 3 && detail::classify_serde_number(token) == detail::serde_number::floating) {
      copy.replace(at, token.size(), token.size(), ' ');  // `-0` (2 bytes) is read alike anyway
      copy.replace(at, 3, "0.0");
    }
  });
  return copy;
}

/// A parse's reusable memory: both JSON parsers and a padded copy of JSON that arrives
/// without padding. Kept between headers: allocating and first-touching these buffers
/// costs more than parsing a small header.
struct json_parsers {
  dom::parser dom;
  simdjson::ondemand::parser ondemand;
  std::unique_ptr<char[], detail::array_deleter> copy;  // uninitialised: only the bytes written are touched
  std::size_t copy_capacity = 0;
  header spare;  // a result handed back (header_parser::recycle): its arrays are reused

  /// `json` followed by SIMDJSON_PADDING readable bytes: the copy's, grown as needed;
  /// nullptr when memory runs out.
  const char* padded_copy(std::string_view json) {
    const std::size_t need = json.size() + simdjson::SIMDJSON_PADDING;
    if (need > copy_capacity) {
      copy.reset();
      copy_capacity = 0;
      try {  // huge pages for large headers (detail::allocate_array)
        copy = std::unique_ptr<char[], detail::array_deleter>(static_cast<char*>(detail::allocate_array(need)),
                                                              detail::array_deleter{need});
      } catch (const std::bad_alloc&) {
        return nullptr;
      }
      copy_capacity = need;
    }
    std::memcpy(copy.get(), json.data(), json.size());
    std::memset(copy.get() + json.size(), ' ', simdjson::SIMDJSON_PADDING);
    return copy.get();
  }
  [[nodiscard]] std::size_t capacity() const noexcept {
    return std::max({dom.capacity(), ondemand.capacity(), copy_capacity});
  }
};

/// The calling thread's parsers, reused across headers. Buffers grown past
/// `max_retained_capacity` bytes of JSON are released when the lease ends, so one huge
/// header does not pin memory for the thread's lifetime.
struct parser_lease {
  static constexpr std::size_t max_retained_capacity = std::size_t{16} << 20;
  json_parsers& parsers = cached();
  parser_lease() = default;
  parser_lease(const parser_lease&) = delete;
  parser_lease& operator=(const parser_lease&) = delete;
  ~parser_lease() {
    if (parsers.capacity() > max_retained_capacity) parsers = json_parsers();
  }
  static json_parsers& cached() {
    thread_local json_parsers p;
    return p;
  }
};

}  // namespace

result<std::uint64_t> read_header_length(std::span<const std::byte> prefix, std::uint64_t file_size,
                                         const parse_options& options) {
  if (file_size < 8 || prefix.size() < 8) {
    return make_error(error_code::header_too_small,
                      fmt::format("header too small: the file has {} bytes, the length prefix needs 8", file_size), 0);
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(prefix[static_cast<std::size_t>(i)]);
  const std::uint64_t cap = options.effective_limits().max_header_bytes;
  if (n > cap) {
    return make_error(error_code::header_too_large,
                      fmt::format("header too large: length prefix says {} bytes, the limit is {}", n, cap), 0);
  }
  if (n > file_size - 8) {
    return make_error(
        error_code::invalid_header_length,
        fmt::format("invalid header length: {} header bytes do not fit in a file of {} bytes", n, file_size), 0);
  }
  return n;
}

namespace {

static_assert(detail::json_padding == simdjson::SIMDJSON_PADDING);

/// Stages 4-7 with the DOM walk, the reference: `text` is followed by SIMDJSON_PADDING
/// readable bytes.
result<header> dom_walk(dom::parser& parser, const char* text, std::size_t n, std::uint64_t file_size,
                        const parse_options& options) {
  // The DOM parse validates UTF-8 itself, so the separate scan (which finds the position
  // and takes precedence over JSON errors) only runs when something failed.
  auto utf8_error = [&]() -> std::optional<error> {
    if (auto bad = detail::first_invalid_utf8(std::string_view(text, n))) {
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
    return json_error(simdjson::error_message(err));
  }
  detail::header_builder builder;
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

/// Stages 4-7; `padded` says SIMDJSON_PADDING readable bytes follow the JSON (their
/// content does not matter), so it is parsed in place instead of copied. A plain header
/// takes the schema scan alone, or the On-Demand pass when spelled unusually (escapes,
/// long numbers); anything else, errors included, the DOM walk.
result<header> parse_header_json(json_parsers& parsers, detail::header_walk walk,
                                 std::span<const std::byte> header_json, std::uint64_t file_size,
                                 const parse_options& options, bool padded) {
  const char* text = reinterpret_cast<const char*>(header_json.data());
  const std::size_t n = header_json.size();
  if (n == 0) return json_error("EOF while parsing a value (the header is empty)");  // valid UTF-8
  if (!padded) {
    text = parsers.padded_copy(std::string_view(text, n));
    if (text == nullptr) return make_error(error_code::io, fmt::format("cannot allocate {} bytes for the JSON", n));
  }
  if (walk != detail::header_walk::dom_only) {
    detail::header_builder builder;
    builder.reuse(parsers.spare);
    if (walk == detail::header_walk::scan_then_ondemand_then_dom) {
      if (detail::scan_plain_header(text, n, options, builder)) return builder.finish(n, file_size, options.policy);
      builder.tensors.clear();  // what the scan read before it declined; the reservations stay
      builder.dims.clear();
      builder.metadata.reset();
    }
    if (detail::walk_plain_header(parsers.ondemand, text, n, options, builder)) {
      return builder.finish(n, file_size, options.policy);
    }
  }
  return dom_walk(parsers.dom, text, n, file_size, options);
}

/// Stages 1-7 on a whole file held in memory, with `parsers`.
result<header> parse_file_with(json_parsers& parsers, detail::header_walk walk, std::span<const std::byte> file,
                               const parse_options& options) {
  auto n = read_header_length(file, file.size(), options);
  if (!n) return std::move(n).err();
  // The data after the header pads the JSON for simdjson when there are enough bytes.
  const bool padded = file.size() - 8 - *n >= detail::json_padding;
  return parse_header_json(parsers, walk, file.subspan(8, static_cast<std::size_t>(*n)), file.size(), options, padded);
}

constexpr auto default_walk = detail::header_walk::scan_then_ondemand_then_dom;

}  // namespace

result<header> parse_header(std::span<const std::byte> header_json, std::uint64_t file_size,
                            const parse_options& options) {
  return detail::parse_header_with(default_walk, header_json, file_size, options, false);
}

result<header> detail::parse_header_padded(std::span<const std::byte> header_json, std::uint64_t file_size,
                                           const parse_options& options) {
  return detail::parse_header_with(default_walk, header_json, file_size, options, true);
}

result<header> parse_file_bytes(std::span<const std::byte> file, const parse_options& options) {
  return detail::parse_file_bytes_with(default_walk, file, options);
}

result<header> detail::parse_header_with(header_walk walk, std::span<const std::byte> header_json,
                                         std::uint64_t file_size, const parse_options& options, bool padded) {
  parser_lease lease;
  return parse_header_json(lease.parsers, walk, header_json, file_size, options, padded);
}

result<header> detail::parse_file_bytes_with(header_walk walk, std::span<const std::byte> file,
                                             const parse_options& options) {
  parser_lease lease;
  return parse_file_with(lease.parsers, walk, file, options);
}

struct header_parser::state {
  json_parsers parsers;
};

header_parser::header_parser() : state_(std::make_unique<state>()) {}
header_parser::~header_parser() = default;
header_parser::header_parser(header_parser&&) noexcept = default;
header_parser& header_parser::operator=(header_parser&&) noexcept = default;

result<header> header_parser::parse(std::span<const std::byte> header_json, std::uint64_t file_size,
                                    const parse_options& options) {
  return parse_header_json(state_->parsers, default_walk, header_json, file_size, options, false);
}

result<header> header_parser::parse_file_bytes(std::span<const std::byte> file, const parse_options& options) {
  return parse_file_with(state_->parsers, default_walk, file, options);
}

result<header> detail::parse_header_padded(header_parser& parser, std::span<const std::byte> header_json,
                                           std::uint64_t file_size, const parse_options& options) {
  return parse_header_json(parser.state_->parsers, default_walk, header_json, file_size, options, true);
}

void header_parser::recycle(header&& spent) noexcept { state_->parsers.spare = std::move(spent); }

}  // namespace safetensors
