// SPDX-License-Identifier: Apache-2.0
// The schema scan of a simply spelled plain header (see plain_scan.h). It reads 8 or 16
// bytes at a time where it can: the padding after the JSON makes those reads safe, and
// every position is checked against the end before it counts. fuzz_header_walks holds it to the
// DOM walk's results.
#include "header/plain_scan.h"

#include <bit>
#include <cstdint>
#include <cstring>
#include <string>
#include <string_view>
#include <utility>

#include <simdjson.h>

#include "header/fixed_key.h"

namespace safetensors::detail {
namespace {

constexpr std::uint64_t byte_highs = 0x8080808080808080;
constexpr std::uint64_t low7_bits = 0x7F7F7F7F7F7F7F7F;

/// Sixteen bytes of text.
using byte_vector = unsigned char __attribute__((vector_size(16)));

/// Eight bytes of text, the first in the low byte (the scan runs on little-endian hosts only).
std::uint64_t load_word(const char* at) noexcept {
  std::uint64_t w = 0;
  std::memcpy(&w, at, 8);
  return w;
}

/// How many of `w`'s bytes, from the first, are ASCII digits (0-8).
int leading_digits(std::uint64_t w) noexcept {
  // A byte is a digit when its high nibble is 3 and adding 6 leaves it so. A carry out of a
  // non-digit byte can only disturb the bytes after it, which are not counted.
  const std::uint64_t high_nibble = (w & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030;
  const std::uint64_t low_nibble = ((w + 0x0606060606060606) & 0xF0F0F0F0F0F0F0F0) ^ 0x3030303030303030;
  const std::uint64_t other = high_nibble | low_nibble;                                  // non-zero bytes: not digits
  const std::uint64_t marks = (((other & low7_bits) + low7_bits) | other) & byte_highs;  // exact, no carries
  return marks == 0 ? 8 : std::countr_zero(marks) / 8;
}

/// The value of the first `count` (1-8) bytes of `w`, all digits.
std::uint64_t digits_value(std::uint64_t w, int count) noexcept {
  // Digits to values; a borrow from the byte after the digits only reaches bytes that the
  // shift then drops. Shifted up, the number gains leading zeros and fills eight places.
  std::uint64_t v = (w - 0x3030303030303030) << (8 * (8 - count));
  v = v * 10 + (v >> 8);  // pairs of digits
  return (((v & 0x000000FF000000FF) * (100 + (1000000ULL << 32))) +
          (((v >> 16) & 0x000000FF000000FF) * (1 + (10000ULL << 32)))) >>
         32;
}

constexpr std::uint64_t small_powers_of_ten[9] = {1, 10, 100, 1000, 10000, 100000, 1000000, 10000000, 100000000};

class plain_scanner {
 public:
  plain_scanner(const char* text, std::size_t n, header_builder& out, const parse_options& options)
      : text_(text), at_(text), end_(text + n), out_(out), caps_(options.effective_limits()) {}

  bool scan() {
    if (at_ == end_ || *at_ != '{') return false;  // leading whitespace: the other walks
    ++at_;
    if (!take('}')) {
      bool metadata_seen = false;
      std::uint64_t tensor_count = 0;
      do {
        std::string_view key;
        if (!read_string(key) || !take(':')) return false;
        if (is_key<"__metadata__">(key)) {
          if (metadata_seen || !read_metadata()) return false;
          metadata_seen = true;
        } else if (++tensor_count > caps_.max_tensors || key.size() > caps_.max_name_bytes || !read_tensor(key)) {
          return false;
        }
      } while (take(','));
      if (!take('}')) return false;
    }
    skip_whitespace();
    if (at_ != end_) return false;
    // Bytes above 0x7F were seen (perhaps in the padding past a string's end): check them.
    return (seen_bits_ & byte_highs) == 0 || simdjson::validate_utf8(text_, static_cast<std::size_t>(end_ - text_));
  }

 private:
  enum field_bit : unsigned { dtype_bit = 1, shape_bit = 2, offsets_bit = 4, all_fields = 7 };

  // Invariant between calls: at_ <= end_, so *at_ is readable (at end_, it is padding).

  void skip_whitespace() noexcept {
    constexpr std::uint64_t json_whitespace = (1ULL << ' ') | (1ULL << '\n') | (1ULL << '\r') | (1ULL << '\t');
    while (at_ < end_ && static_cast<unsigned char>(*at_) <= ' ' &&
           ((json_whitespace >> static_cast<unsigned char>(*at_)) & 1) != 0) {
      ++at_;
    }
  }

  /// Skips whitespace, then `c` if it comes next. Written files have no whitespace, so
  /// `c` is looked for first.
  bool take(char c) noexcept {
    if (*at_ != c) {
      skip_whitespace();
      if (*at_ != c) return false;
    }
    return ++at_ <= end_;  // a match at end_ was padding
  }

  /// A string without escapes or control characters, as a view of the text.
  bool read_string(std::string_view& out) noexcept {
    if (!take('"')) return false;
    const char* first = at_;
    std::uint64_t seen = 0;
    while (at_ < end_) {
      // Sixteen bytes at a time (GNU vector extension: SSE2 on x86-64, NEON on arm64).
      byte_vector v;
      std::memcpy(&v, at_, sizeof v);
      const auto stops = (v == '"') | (v == '\\') | (v < 0x20);  // 0xFF in each such byte
      std::uint64_t halves[2] = {0, 0};
      std::memcpy(halves, &stops, sizeof halves);
      std::uint64_t bytes[2] = {0, 0};
      std::memcpy(bytes, &v, sizeof bytes);
      seen |= bytes[0] | bytes[1];
      if ((halves[0] | halves[1]) == 0) {
        at_ += 16;
        continue;
      }
      at_ += halves[0] != 0 ? std::countr_zero(halves[0]) / 8 : 8 + std::countr_zero(halves[1]) / 8;
      seen_bits_ |= seen;
      if (at_ >= end_ || *at_ != '"') return false;  // an escape, a control byte, or past the end
      out = std::string_view(first, static_cast<std::size_t>(at_ - first));
      ++at_;
      return true;
    }
    return false;
  }

  /// A number of 1-19 digits without a leading zero, eight digits at a time.
  bool read_number(std::uint64_t& out) noexcept {
    if (static_cast<unsigned char>(*at_) <= ' ') skip_whitespace();
    const char* first = at_;
    std::uint64_t w = load_word(at_);
    int count = leading_digits(w);
    if (count == 0 || (count > 1 && *first == '0')) return false;
    std::uint64_t value = digits_value(w, count);
    at_ += count;
    if (count == 8) {  // more than 8 digits: rare in shapes, common in offsets past 100 MB
      for (int chunk = 0; chunk < 2 && at_ < end_; ++chunk) {
        w = load_word(at_);
        count = leading_digits(w);
        if (count == 0) break;
        value = value * small_powers_of_ten[count] + digits_value(w, count);  // wraps only past 19 digits: refused
        at_ += count;
        if (count < 8) break;
      }
      if (at_ - first > 19) return false;
    }
    if (at_ > end_) return false;  // digits in the padding
    out = value;
    return true;
  }

  /// Skips `Literal` if the text continues with it.
  template <literal Literal>
  bool skip_literal() noexcept {
    constexpr std::size_t length = sizeof(Literal.chars) - 1;
    if (!starts_with_key<Literal>(at_) || static_cast<std::size_t>(end_ - at_) < length) return false;
    at_ += length;
    return true;
  }

  bool read_tensor(std::string_view name) {
    if (!take('{')) return false;
    tensor_info t;
    t.name = name;  // in the JSON text until header_builder::finish copies it
    unsigned seen = 0;
    bool more = true;  // a field follows
    // Writers put the fields in this order, without spaces: each field name and its
    // separators are then one literal.
    if (skip_literal<"\"dtype\":">()) {
      if (!read_dtype(t)) return false;
      seen = dtype_bit;
      if (skip_literal<",\"shape\":">()) {
        if (!read_shape(t)) return false;
        seen |= shape_bit;
        if (skip_literal<",\"data_offsets\":">()) {
          if (!read_offsets(t)) return false;
          seen |= offsets_bit;
        }
      }
      more = take(',');
    }
    for (; more; more = take(',')) {  // any order, any spacing
      if (!take('"')) return false;
      unsigned bit = 0;
      if (skip_literal<"dtype\"">()) {
        bit = dtype_bit;
      } else if (skip_literal<"shape\"">()) {
        bit = shape_bit;
      } else if (skip_literal<"data_offsets\"">()) {
        bit = offsets_bit;
      }
      if (bit == 0 || (seen & bit) != 0 || !take(':')) return false;  // unknown or repeated
      seen |= bit;
      const bool ok = bit == dtype_bit ? read_dtype(t) : bit == shape_bit ? read_shape(t) : read_offsets(t);
      if (!ok) return false;
    }
    if (!take('}') || seen != all_fields) return false;
    out_.tensors.push_back(t);
    return true;
  }

  bool read_dtype(tensor_info& t) {
    std::string_view name;
    if (!read_string(name)) return false;
    if (last_dtype_text_.empty() || !same_short_text(name, last_dtype_text_)) {  // files hold few dtypes
      auto type = parse_dtype(name);
      if (!type) return false;
      last_dtype_text_ = name;
      last_dtype_ = *type;
    }
    t.type = last_dtype_;
    return true;
  }

  bool read_shape(tensor_info& t) {
    if (!take('[')) return false;
    const std::size_t at = out_.dims.size();
    if (!take(']')) {
      do {
        std::uint64_t d = 0;
        if (!read_number(d)) return false;
        out_.dims.push_back(d);
      } while (take(','));
      if (!take(']')) return false;
    }
    const std::size_t rank = out_.dims.size() - at;
    if (rank > caps_.max_rank) return false;
    t.shape = std::span<const std::uint64_t>(out_.dims.data() + at, rank);  // only the size counts (see builder)
    return true;
  }

  bool read_offsets(tensor_info& t) {
    return take('[') && read_number(t.begin) && take(',') && read_number(t.end) && take(']');
  }

  bool read_metadata() {
    skip_whitespace();
    if (end_ - at_ >= 4 && starts_with_key<"null">(at_)) {
      at_ += 4;  // what follows must be a separator: the caller checks
      return true;
    }
    if (!take('{')) return false;
    metadata_map map;
    if (!take('}')) {
      std::uint64_t bytes = 0;
      do {
        std::string_view key;
        std::string_view text;
        if (!read_string(key) || !take(':') || !read_string(text)) return false;
        bytes += key.size() + text.size();
        if (bytes > caps_.max_metadata_bytes) return false;
        if (!map.emplace(std::string(key), std::string(text)).second) return false;  // a duplicate key
      } while (take(','));
      if (!take('}')) return false;
    }
    out_.metadata = std::move(map);
    return true;
  }

  const char* text_;
  const char* at_;
  const char* end_;
  header_builder& out_;
  limits caps_;
  std::uint64_t seen_bits_ = 0;  // every word read inside strings, or-ed
  std::string_view last_dtype_text_;
  dtype last_dtype_ = dtype::U8;
};

}  // namespace

bool scan_plain_header(const char* text, std::size_t n, const parse_options& options, header_builder& out) {
  if constexpr (std::endian::native != std::endian::little) {
    return false;  // the word reads assume the first byte is the low one
  } else {
    out.reserve_for(n);
    plain_scanner scanner(text, n, out, options);
    return scanner.scan();
  }
}

}  // namespace safetensors::detail
