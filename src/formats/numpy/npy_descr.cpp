// SPDX-License-Identifier: Apache-2.0
// The dtype table between NumPy descrs and SafeTensors dtypes.
#include "formats/numpy/npy_descr.h"

#include <fmt/format.h>

#include <array>
#include <string_view>

namespace safetensors::numpy {
namespace {

struct descr_entry {
  char kind;
  unsigned bytes;
  dtype type;
};

constexpr std::array<descr_entry, 13> table{{
    {'b', 1, dtype::BOOL},
    {'i', 1, dtype::I8},
    {'u', 1, dtype::U8},
    {'i', 2, dtype::I16},
    {'u', 2, dtype::U16},
    {'f', 2, dtype::F16},
    {'i', 4, dtype::I32},
    {'u', 4, dtype::U32},
    {'f', 4, dtype::F32},
    {'i', 8, dtype::I64},
    {'u', 8, dtype::U64},
    {'f', 8, dtype::F64},
    {'c', 8, dtype::C64},
}};

error unsupported(std::string_view descr, std::string_view why) {
  return make_error(error_code::unsupported, fmt::format("NumPy dtype '{}' ({}) has no SafeTensors dtype", descr, why));
}

std::string_view kind_name(char kind) {
  switch (kind) {
    case 'S':
    case 'a': return "byte string";
    case 'U': return "unicode string";
    case 'O': return "Python object";
    case 'M': return "datetime";
    case 'm': return "timedelta";
    case 'c': return "complex";
    case 'f': return "float";
    default: return "unknown kind";
  }
}

result<detail::npy_type> void_type(std::string_view descr, unsigned bytes, const npy_options& options) {
  if (options.void_as) {
    const dtype t = *options.void_as;
    if (dtype_is_sub_byte(t) || dtype_bits(t) / 8 != bytes) {
      return make_error(error_code::invalid_argument,
                        fmt::format("void dtype '{}' is {} bytes wide; {} is not", descr, bytes, dtype_name(t)));
    }
    return detail::npy_type{t, false};
  }
  if (bytes == 2) return detail::npy_type{dtype::BF16, false};  // MLX writes bfloat16 as <V2
  return make_error(error_code::unsupported,
                    fmt::format("NumPy void dtype '{}' is raw bytes; give the dtype it holds (void_as)", descr));
}

}  // namespace

namespace detail {

result<npy_type> parse_npy_descr(const py_value& descr, const npy_options& options) {
  if (descr.type == py_value::kind::list) {
    return make_error(error_code::unsupported, "structured NumPy dtypes (record arrays) have no SafeTensors dtype");
  }
  if (descr.type != py_value::kind::string) {
    return make_error(error_code::invalid_format,
                      fmt::format("npy header: 'descr' is a {}, not a string", py_kind_name(descr.type)));
  }
  const std::string_view text = descr.text;
  std::size_t at = 0;
  char order = '=';
  if (!text.empty() && (text[0] == '<' || text[0] == '>' || text[0] == '|' || text[0] == '=')) order = text[at++];
  if (at >= text.size()) return make_error(error_code::invalid_format, fmt::format("npy header: bad descr '{}'", text));
  const char kind = text[at++];
  unsigned bytes = 0;
  if (at >= text.size() || text.size() - at > 9) {
    if (kind == 'O' || kind == 'M' || kind == 'm') return unsupported(text, kind_name(kind));
    return make_error(error_code::invalid_format, fmt::format("npy header: bad descr '{}'", text));
  }
  for (; at < text.size(); ++at) {
    if (text[at] < '0' || text[at] > '9') {
      if (kind == 'M' || kind == 'm') return unsupported(text, kind_name(kind));
      return make_error(error_code::invalid_format, fmt::format("npy header: bad descr '{}'", text));
    }
    bytes = bytes * 10 + static_cast<unsigned>(text[at] - '0');
  }
  if (kind == 'V') return void_type(text, bytes, options);
  for (const auto& e : table) {
    if (e.kind == kind && e.bytes == bytes) return npy_type{e.type, order == '>' && bytes > 1};
  }
  if (kind == 'c' && bytes == 16) return unsupported(text, "complex128");
  if (kind == 'f' && bytes > 8) return unsupported(text, "extended precision float");
  if (kind == 'b' || kind == 'i' || kind == 'u' || kind == 'f' || kind == 'c' || kind == 'S' || kind == 'a' ||
      kind == 'U' || kind == 'O' || kind == 'M' || kind == 'm') {
    return unsupported(text, kind_name(kind));
  }
  return make_error(error_code::invalid_format, fmt::format("npy header: bad descr '{}'", text));
}

std::size_t npy_swap_width(dtype type) noexcept {
  const std::size_t width = dtype_bits(type) / 8;
  return type == dtype::C64 ? width / 2 : width;
}

}  // namespace detail

std::optional<std::string> npy_descr(dtype type) {
  if (type == dtype::BF16) return std::string("<V2");
  for (const auto& e : table) {
    if (e.type == type) return fmt::format("{}{}{}", e.bytes == 1 ? '|' : '<', e.kind, e.bytes);
  }
  return std::nullopt;
}

}  // namespace safetensors::numpy
