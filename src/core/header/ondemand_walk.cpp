// SPDX-License-Identifier: Apache-2.0
// The On-Demand walk of a plain header (see ondemand_walk.h). Every value it accepts it
// reads in full, so the JSON it accepts is checked as thoroughly as the DOM parse checks it;
// the differential fuzz target fuzz_header_walks holds it to the DOM walk's results.
#include "header/ondemand_walk.h"

#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include "header/fixed_key.h"

namespace safetensors::detail {
namespace {

namespace od = simdjson::ondemand;
using simdjson::SUCCESS;

/// A raw (still escaped) key equal to `Expected`: its bytes, then the closing quote. An
/// escaped spelling of the same key does not match; the entry is then declined and the
/// DOM walk, which compares unescaped keys, reads it.
template <literal Expected>
bool raw_key_is(const char* raw) noexcept {
  return starts_with_key<Expected>(raw) && raw[sizeof(Expected.chars) - 1] == '"';
}

class plain_walker {
 public:
  plain_walker(header_builder& out, const parse_options& options) : out_(out), caps_(options.effective_limits()) {}

  bool walk(od::document& doc) {
    od::object top;
    if (doc.get_object().get(top) != SUCCESS) return false;
    bool metadata_seen = false;
    std::uint64_t tensor_count = 0;
    for (auto member : top) {
      od::field field;
      std::string_view key;
      if (std::move(member).get(field) != SUCCESS || field.unescaped_key().get(key) != SUCCESS) return false;
      if (is_key<"__metadata__">(key)) {
        if (metadata_seen || !read_metadata(field.value())) return false;
        metadata_seen = true;
      } else if (++tensor_count > caps_.max_tensors || key.size() > caps_.max_name_bytes ||
                 !read_tensor(key, field.value())) {
        return false;
      }
    }
    // Nothing may follow the top-level object (3.0.1's document has no at_end()).
    return doc.current_location().error() == simdjson::OUT_OF_BOUNDS;
  }

 private:
  enum field_bit : unsigned { dtype_bit = 1, shape_bit = 2, offsets_bit = 4, all_fields = 7 };

  bool read_tensor(std::string_view name, od::value& value) {
    od::object entry;
    if (value.get_object().get(entry) != SUCCESS) return false;
    tensor_info t;
    t.name = name;  // in the parser's string buffer until header_builder::finish copies it
    unsigned seen = 0;
    for (auto member : entry) {
      od::field field;
      if (std::move(member).get(field) != SUCCESS) return false;
      const char* key = field.key().raw();
      const unsigned bit = raw_key_is<"dtype">(key)          ? dtype_bit
                           : raw_key_is<"shape">(key)        ? shape_bit
                           : raw_key_is<"data_offsets">(key) ? offsets_bit
                                                             : 0U;
      if (bit == 0 || (seen & bit) != 0) return false;  // an unknown or repeated field
      seen |= bit;
      od::value& v = field.value();
      const bool ok = bit == dtype_bit ? read_dtype(v, t) : bit == shape_bit ? read_shape(v, t) : read_offsets(v, t);
      if (!ok) return false;
    }
    if (seen != all_fields) return false;
    out_.tensors.push_back(t);
    return true;
  }

  /// The name is read raw from the JSON (no unescaping pass, no string buffer): a dtype
  /// name never needs escapes, so one with a backslash is declined.
  bool read_dtype(od::value& v, tensor_info& t) {
    od::raw_json_string raw;
    if (v.get_raw_json_string().get(raw) != SUCCESS) return false;
    const char* text = raw.raw();
    const std::size_t cached = last_dtype_text_.size();
    // Files hold few dtypes: the last one's bytes then the closing quote skip the table
    // scan. The text is padded, so reading past a shorter name stays in bounds.
    if (cached == 0 || !same_short_text({text, cached}, last_dtype_text_) || text[cached] != '"') {
      std::size_t length = 0;
      for (; text[length] != '"'; ++length) {  // stage 1 found the closing quote
        if (text[length] == '\\') return false;
      }
      auto type = parse_dtype({text, length});
      if (!type) return false;
      last_dtype_text_ = {text, length};
      last_dtype_ = *type;
    }
    t.type = last_dtype_;
    return true;
  }

  bool read_shape(od::value& v, tensor_info& t) {
    od::array dims;
    if (v.get_array().get(dims) != SUCCESS) return false;
    const std::size_t at = out_.dims.size();
    for (auto d : dims) {
      std::uint64_t x = 0;
      if (d.get_uint64().get(x) != SUCCESS) return false;
      out_.dims.push_back(x);
    }
    const std::size_t rank = out_.dims.size() - at;
    if (rank > caps_.max_rank) return false;
    t.shape = std::span<const std::uint64_t>(out_.dims.data() + at, rank);  // only the size counts (see builder)
    return true;
  }

  static bool read_offsets(od::value& v, tensor_info& t) {
    od::array pair;
    if (v.get_array().get(pair) != SUCCESS) return false;
    std::uint64_t both[2] = {0, 0};
    std::size_t count = 0;
    for (auto d : pair) {
      if (count == 2 || d.get_uint64().get(both[count]) != SUCCESS) return false;
      ++count;
    }
    if (count != 2) return false;
    t.begin = both[0];
    t.end = both[1];
    return true;
  }

  bool read_metadata(od::value& v) {
    od::json_type type{};
    if (v.type().get(type) != SUCCESS) return false;
    if (type == od::json_type::null) {
      bool is_null = false;
      return v.is_null().get(is_null) == SUCCESS && is_null;
    }
    od::object obj;
    if (v.get_object().get(obj) != SUCCESS) return false;
    metadata_map map;
    std::uint64_t bytes = 0;
    for (auto member : obj) {
      od::field field;
      std::string_view key;
      std::string_view text;
      if (std::move(member).get(field) != SUCCESS || field.unescaped_key().get(key) != SUCCESS ||
          field.value().get_string().get(text) != SUCCESS) {
        return false;
      }
      bytes += key.size() + text.size();
      if (bytes > caps_.max_metadata_bytes) return false;
      if (!map.emplace(std::string(key), std::string(text)).second) return false;  // a duplicate key
    }
    out_.metadata = std::move(map);
    return true;
  }

  header_builder& out_;
  limits caps_;
  std::string_view last_dtype_text_;  // the last dtype name parsed (never "")
  dtype last_dtype_ = dtype::U8;
};

}  // namespace

bool walk_plain_header(od::parser& parser, const char* text, std::size_t n, const parse_options& options,
                       header_builder& out) {
  od::document doc;
  if (parser.iterate(text, n, n + simdjson::SIMDJSON_PADDING).get(doc) != SUCCESS) return false;
  out.reserve_for(n);
  plain_walker walker(out, options);
  return walker.walk(doc);
}

}  // namespace safetensors::detail
