// SPDX-License-Identifier: Apache-2.0
// Recursive-descent parser for the literal subset of a .npy header.
#include "formats/numpy/py_literal.h"

#include <fmt/format.h>

#include <limits>

namespace safetensors::numpy::detail {
namespace {

class parser {
 public:
  explicit parser(std::string_view text) : text_(text) {}

  result<py_value> parse_all() {
    py_value v;
    if (auto s = value(v, 0); !s) return std::move(s).err();
    skip_space();
    if (pos_ != text_.size()) return fail("unexpected text after the literal");
    return v;
  }

 private:
  error fail(std::string what) const {
    if (pos_ >= text_.size()) what = fmt::format("the literal ends early ({})", what);
    return make_error(error_code::invalid_format, fmt::format("npy header: {}", what), pos_);
  }

  void skip_space() {
    while (pos_ < text_.size() &&
           (text_[pos_] == ' ' || text_[pos_] == '\t' || text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool eat(char c) {
    skip_space();
    if (pos_ < text_.size() && text_[pos_] == c) {
      ++pos_;
      return true;
    }
    return false;
  }

  status value(py_value& out, int depth) {
    if (depth > py_literal_max_depth) return fail(fmt::format("nesting deeper than {}", py_literal_max_depth));
    skip_space();
    if (pos_ >= text_.size()) return fail("a value is missing");
    const char c = text_[pos_];
    if (c == '{') return dict(out, depth);
    if (c == '[') return sequence(out, depth, ']', py_value::kind::list);
    if (c == '(') return sequence(out, depth, ')', py_value::kind::tuple);
    if (c == '\'' || c == '"') {
      out.type = py_value::kind::string;
      return string(out.text);
    }
    if (c == '-' || (c >= '0' && c <= '9')) return integer(out);
    return word(out);
  }

  status word(py_value& out) {
    const std::size_t start = pos_;
    while (pos_ < text_.size() && ((text_[pos_] >= 'A' && text_[pos_] <= 'Z') ||
                                   (text_[pos_] >= 'a' && text_[pos_] <= 'z') || text_[pos_] == '_')) {
      ++pos_;
    }
    const std::string_view w = text_.substr(start, pos_ - start);
    if (w == "True" || w == "False") {
      out.type = py_value::kind::boolean;
      out.boolean = w == "True";
      return {};
    }
    if (w == "None") {
      out.type = py_value::kind::none;
      return {};
    }
    pos_ = start;
    return fail(w.empty() ? fmt::format("unexpected character 0x{:02x}", static_cast<unsigned char>(text_[start]))
                          : fmt::format("'{}' is not a literal", w.substr(0, 32)));
  }

  status integer(py_value& out) {
    const bool negative = text_[pos_] == '-';
    if (negative) ++pos_;
    const std::size_t digits_start = pos_;
    std::uint64_t magnitude = 0;
    while (pos_ < text_.size() && text_[pos_] >= '0' && text_[pos_] <= '9') {
      const auto digit = static_cast<std::uint64_t>(text_[pos_] - '0');
      if (magnitude > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) {
        return fail("integer out of range");
      }
      magnitude = magnitude * 10 + digit;
      ++pos_;
    }
    const std::size_t ndigits = pos_ - digits_start;
    if (ndigits == 0) return fail("'-' without digits");
    if (ndigits > 1 && text_[digits_start] == '0') return fail("integer with a leading zero");
    if (pos_ < text_.size() && text_[pos_] == 'L') ++pos_;  // Python 2 long, written by old numpy
    const std::uint64_t limit =
        static_cast<std::uint64_t>(std::numeric_limits<std::int64_t>::max()) + (negative ? 1 : 0);
    if (magnitude > limit) return fail("integer out of range");
    out.type = py_value::kind::integer;
    out.integer = negative ? static_cast<std::int64_t>(0 - magnitude) : static_cast<std::int64_t>(magnitude);
    return {};
  }

  static int hex_digit(char c) {
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
  }

  status string(std::string& out) {
    const char quote = text_[pos_++];
    while (true) {
      if (pos_ >= text_.size()) return fail("unterminated string");
      const char c = text_[pos_++];
      if (c == quote) return {};
      if (c == '\n') return fail("newline inside a string");
      if (c != '\\') {
        out.push_back(c);
        continue;
      }
      if (pos_ >= text_.size()) return fail("unterminated string");
      const char e = text_[pos_++];
      switch (e) {
        case '\\':
        case '\'':
        case '"': out.push_back(e); break;
        case 'n': out.push_back('\n'); break;
        case 't': out.push_back('\t'); break;
        case 'r': out.push_back('\r'); break;
        case '0': out.push_back('\0'); break;
        case 'x': {
          const int hi = pos_ + 1 < text_.size() ? hex_digit(text_[pos_]) : -1;
          const int lo = hi >= 0 ? hex_digit(text_[pos_ + 1]) : -1;
          if (lo < 0) return fail("bad \\x escape");
          out.push_back(static_cast<char>(hi * 16 + lo));
          pos_ += 2;
          break;
        }
        default: --pos_; return fail(fmt::format("unsupported escape '\\{}'", e));
      }
    }
  }

  status sequence(py_value& out, int depth, char close, py_value::kind kind) {
    ++pos_;  // opening bracket
    bool saw_comma = false;
    while (true) {
      if (eat(close)) break;
      py_value item;
      if (auto s = value(item, depth + 1); !s) return s;
      out.items.push_back(std::move(item));
      if (eat(',')) {
        saw_comma = true;
        continue;
      }
      if (eat(close)) break;
      return fail(fmt::format("expected ',' or '{}'", close));
    }
    // Python: "(x)" is x itself, not a one-element tuple.
    if (kind == py_value::kind::tuple && out.items.size() == 1 && !saw_comma) {
      py_value inner = std::move(out.items.front());
      out = std::move(inner);
      return {};
    }
    out.type = kind;
    return {};
  }

  status dict(py_value& out, int depth) {
    ++pos_;  // '{'
    out.type = py_value::kind::dict;
    while (true) {
      if (eat('}')) return {};
      skip_space();
      if (pos_ >= text_.size() || (text_[pos_] != '\'' && text_[pos_] != '"')) {
        return fail("dict keys must be strings");
      }
      const std::size_t key_at = pos_;
      std::string key;
      if (auto s = string(key); !s) return s;
      if (out.keys.size() == py_literal_max_dict_keys) return fail("too many dict keys");
      if (out.find(key) != nullptr) {
        pos_ = key_at;
        return fail(fmt::format("duplicate key '{}'", key));
      }
      if (!eat(':')) return fail("expected ':' after a dict key");
      py_value item;
      if (auto s = value(item, depth + 1); !s) return s;
      out.keys.push_back(std::move(key));
      out.items.push_back(std::move(item));
      if (eat(',')) continue;
      if (eat('}')) return {};
      return fail("expected ',' or '}'");
    }
  }

  std::string_view text_;
  std::size_t pos_ = 0;
};

}  // namespace

const py_value* py_value::find(std::string_view key) const noexcept {
  for (std::size_t i = 0; i < keys.size(); ++i) {
    if (keys[i] == key) return &items[i];
  }
  return nullptr;
}

result<py_value> parse_py_literal(std::string_view text) { return parser(text).parse_all(); }

std::string_view py_kind_name(py_value::kind k) noexcept {
  switch (k) {
    case py_value::kind::none: return "None";
    case py_value::kind::boolean: return "bool";
    case py_value::kind::integer: return "int";
    case py_value::kind::string: return "str";
    case py_value::kind::tuple: return "tuple";
    case py_value::kind::list: return "list";
    case py_value::kind::dict: return "dict";
  }
  return "?";
}

}  // namespace safetensors::numpy::detail
