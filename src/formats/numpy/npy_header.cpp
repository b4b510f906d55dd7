// SPDX-License-Identifier: Apache-2.0
// .npy preamble: magic, version, length, and the header dict's three keys.
#include <fmt/format.h>

#include <array>
#include <cstring>
#include <string_view>

#include "formats/numpy/npy_descr.h"
#include "formats/numpy/py_literal.h"
#include "safetensors/formats/npy.h"

namespace safetensors::numpy {
namespace {

constexpr std::string_view magic = "\x93NUMPY";

error invalid(std::string message, std::optional<std::uint64_t> offset = std::nullopt) {
  return make_error(error_code::invalid_format, std::move(message), offset);
}

std::uint32_t read_le(std::span<const std::byte> bytes, std::size_t at, std::size_t width) {
  std::uint32_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= std::to_integer<std::uint32_t>(bytes[at + i]) << (8 * i);
  return v;
}

struct preamble_layout {
  std::uint8_t major = 0;
  std::uint8_t minor = 0;
  std::size_t length_at = 0;  // where the header text starts
  std::uint64_t total = 0;
};

result<preamble_layout> read_layout(std::span<const std::byte> bytes, const npy_options& options) {
  if (bytes.size() < magic.size() || std::memcmp(bytes.data(), magic.data(), magic.size()) != 0) {
    return invalid("not a .npy file: the magic \"\\x93NUMPY\" is missing", 0);
  }
  if (bytes.size() < 8) return invalid("the .npy preamble ends before the version", bytes.size());
  preamble_layout layout;
  layout.major = std::to_integer<std::uint8_t>(bytes[6]);
  layout.minor = std::to_integer<std::uint8_t>(bytes[7]);
  if (layout.major < 1 || layout.major > 3 || layout.minor != 0) {
    return make_error(error_code::unsupported,
                      fmt::format(".npy version {}.{} (known: 1.0, 2.0, 3.0)", layout.major, layout.minor), 6);
  }
  const std::size_t width = layout.major == 1 ? 2 : 4;
  layout.length_at = 8 + width;
  if (bytes.size() < layout.length_at) return invalid("the .npy preamble ends before the header length", bytes.size());
  const std::uint32_t length = read_le(bytes, 8, width);
  if (length > options.max_header_bytes) {
    return make_error(error_code::limit_exceeded,
                      fmt::format(".npy header of {} bytes, the limit is {}", length, options.max_header_bytes), 8);
  }
  layout.total = layout.length_at + std::uint64_t{length};
  return layout;
}

result<std::vector<std::uint64_t>> read_shape(const detail::py_value& v) {
  if (v.type != detail::py_value::kind::tuple) {
    return invalid(fmt::format("npy header: 'shape' is a {}, not a tuple", detail::py_kind_name(v.type)));
  }
  std::vector<std::uint64_t> shape;
  shape.reserve(v.items.size());
  for (const auto& dim : v.items) {
    if (dim.type != detail::py_value::kind::integer || dim.integer < 0) {
      return invalid("npy header: 'shape' must hold non-negative integers");
    }
    shape.push_back(static_cast<std::uint64_t>(dim.integer));
  }
  return shape;
}

}  // namespace

bool npy_header::needs_transpose() const noexcept {
  if (!fortran_order) return false;
  int above_one = 0;
  for (auto d : shape) {
    if (d == 0) return false;  // empty: no data to reorder
    if (d > 1) ++above_one;
  }
  return above_one > 1;
}

result<std::uint64_t> npy_preamble_size(std::span<const std::byte> prefix, const npy_options& options) {
  auto layout = read_layout(prefix, options);
  if (!layout) return std::move(layout).err();
  return layout->total;
}

result<npy_header> parse_npy_header(std::span<const std::byte> bytes, const npy_options& options) {
  auto layout = read_layout(bytes, options);
  if (!layout) return std::move(layout).err();
  if (bytes.size() < layout->total) {
    return invalid(fmt::format(".npy header needs {} bytes, only {} present", layout->total, bytes.size()),
                   bytes.size());
  }
  const std::string_view text(reinterpret_cast<const char*>(bytes.data()) + layout->length_at,
                              static_cast<std::size_t>(layout->total - layout->length_at));
  auto literal = detail::parse_py_literal(text);
  if (!literal) {
    error e = std::move(literal).err();
    if (e.offset) *e.offset += layout->length_at;
    return e;
  }
  const detail::py_value& dict = *literal;
  if (dict.type != detail::py_value::kind::dict) {
    return invalid(fmt::format("npy header is a {}, not a dict", detail::py_kind_name(dict.type)), layout->length_at);
  }
  const auto* descr = dict.find("descr");
  const auto* fortran = dict.find("fortran_order");
  const auto* shape = dict.find("shape");
  if (descr == nullptr || fortran == nullptr || shape == nullptr || dict.keys.size() != 3) {
    return invalid("npy header must have exactly the keys 'descr', 'fortran_order' and 'shape'", layout->length_at);
  }
  if (fortran->type != detail::py_value::kind::boolean) {
    return invalid("npy header: 'fortran_order' is not True or False", layout->length_at);
  }

  npy_header h;
  h.major_version = layout->major;
  h.minor_version = layout->minor;
  h.fortran_order = fortran->boolean;
  h.data_offset = layout->total;
  auto parsed_shape = read_shape(*shape);
  if (!parsed_shape) {
    error e = std::move(parsed_shape).err();
    e.offset = layout->length_at;
    return e;
  }
  h.shape = std::move(*parsed_shape);
  auto type = detail::parse_npy_descr(*descr, options);
  if (!type) {
    error e = std::move(type).err();
    e.offset = layout->length_at;
    return e;
  }
  h.descr = descr->type == detail::py_value::kind::string ? descr->text : std::string("<structured>");
  h.type = type->type;
  h.big_endian = type->big_endian;
  const auto size = byte_size(h.type, h.shape);
  if (size.problem != size_problem::none) {
    return make_error(error_code::validation_overflow, "npy header: the shape's byte size overflows 64 bits",
                      layout->length_at);
  }
  h.data_bytes = size.bytes;
  return h;
}

}  // namespace safetensors::numpy
