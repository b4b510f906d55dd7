// SPDX-License-Identifier: Apache-2.0
// GGUF header parsing (gguf.h): every count and size is checked against the bytes left
// in the file and against hard caps before anything is allocated.
#include <algorithm>
#include <bit>
#include <string>
#include <unordered_set>

#include <fmt/format.h>

#include "formats/gguf/cursor.h"
#include "formats/gguf/tensor_size.h"
#include "safetensors/formats/gguf.h"

namespace safetensors::gguf {
namespace {

using detail::alignment_key;
using detail::cursor;
using detail::max_dims;

constexpr std::uint32_t gguf_magic = 0x46554747;           // "GGUF" read little-endian
constexpr std::uint64_t min_kv_bytes = 8 + 4 + 1;          // key length, type, smallest value
constexpr std::uint64_t min_tensor_bytes = 8 + 4 + 4 + 8;  // name length, n_dims, type, offset
constexpr std::uint64_t reserve_cap = 4096;                // counts are only trusted as far as they are parsed

[[nodiscard]] error format_error(std::string message, std::uint64_t offset) {
  return make_error(error_code::invalid_format, std::move(message), offset);
}

/// A count read at `at`, each item taking at least `min_bytes`, must fit in the rest of the file.
[[nodiscard]] status check_count(const cursor& c, std::uint64_t count, std::uint64_t min_bytes, const char* what,
                                 std::uint64_t at) {
  if (count > c.file_remaining() / min_bytes) {
    return format_error(
        fmt::format("{} {} cannot fit in the {} bytes left in the file", what, count, c.file_remaining()), at);
  }
  return {};
}

[[nodiscard]] status read_string(cursor& c, const parse_limits& limits, const char* what, std::string& out) {
  const std::uint64_t at = c.pos();
  std::uint64_t length = 0;
  if (status s = c.read(length, what); !s) return s;
  if (length > limits.max_string_bytes) {
    return format_error(
        fmt::format("{} length {} exceeds the limit of {} bytes", what, length, limits.max_string_bytes), at);
  }
  if (length > c.file_remaining()) {
    return format_error(
        fmt::format("{} length {} runs past the end of the file ({} bytes left)", what, length, c.file_remaining()),
        at);
  }
  if (status s = c.need(length, what); !s) return s;
  const auto bytes = c.take(static_cast<std::size_t>(length));
  out.assign(reinterpret_cast<const char*>(bytes.data()), bytes.size());
  return {};
}

template <class T>
[[nodiscard]] status read_number(cursor& c, value& out) {
  using bits_t =
      std::conditional_t<sizeof(T) == 1, std::uint8_t,
                         std::conditional_t<sizeof(T) == 2, std::uint16_t,
                                            std::conditional_t<sizeof(T) == 4, std::uint32_t, std::uint64_t>>>;
  bits_t bits = 0;
  if (status s = c.read(bits, "metadata value"); !s) return s;
  out = std::bit_cast<T>(bits);
  return {};
}

[[nodiscard]] status read_scalar(cursor& c, value_type t, value& out, const parse_limits& limits) {
  switch (t) {
    case value_type::uint8: return read_number<std::uint8_t>(c, out);
    case value_type::int8: return read_number<std::int8_t>(c, out);
    case value_type::uint16: return read_number<std::uint16_t>(c, out);
    case value_type::int16: return read_number<std::int16_t>(c, out);
    case value_type::uint32: return read_number<std::uint32_t>(c, out);
    case value_type::int32: return read_number<std::int32_t>(c, out);
    case value_type::float32: return read_number<float>(c, out);
    case value_type::uint64: return read_number<std::uint64_t>(c, out);
    case value_type::int64: return read_number<std::int64_t>(c, out);
    case value_type::float64: return read_number<double>(c, out);
    case value_type::boolean: {
      const std::uint64_t at = c.pos();
      std::uint8_t b = 0;
      if (status s = c.read(b, "metadata value"); !s) return s;
      if (b > 1) return format_error(fmt::format("BOOL value {} is neither 0 nor 1", b), at);
      out = b == 1;
      return {};
    }
    case value_type::string: {
      std::string text;
      if (status s = read_string(c, limits, "string value", text); !s) return s;
      out = std::move(text);
      return {};
    }
    case value_type::array: break;
  }
  return format_error("unexpected value type", c.pos());
}

[[nodiscard]] status read_value_type(cursor& c, value_type& out, const char* what) {
  const std::uint64_t at = c.pos();
  std::uint32_t code = 0;
  if (status s = c.read(code, what); !s) return s;
  if (code > static_cast<std::uint32_t>(value_type::float64)) {
    return format_error(fmt::format("unknown {} {}", what, code), at);
  }
  out = static_cast<value_type>(code);
  return {};
}

[[nodiscard]] status read_array(cursor& c, value& out, const parse_limits& limits) {
  array_value arr;
  const std::uint64_t type_at = c.pos();
  if (status s = read_value_type(c, arr.element_type, "array element type"); !s) return s;
  if (arr.element_type == value_type::array) return format_error("nested arrays are not supported", type_at);
  const std::uint64_t count_at = c.pos();
  std::uint64_t count = 0;
  if (status s = c.read(count, "array length"); !s) return s;
  if (count > limits.max_array_elements) {
    return format_error(fmt::format("array of {} elements exceeds the limit of {}", count, limits.max_array_elements),
                        count_at);
  }
  const std::size_t width = value_type_size(arr.element_type);
  const std::uint64_t min_bytes = width != 0 ? width : 8;  // a string is at least its length
  if (status s = check_count(c, count, min_bytes, "array length", count_at); !s) return s;
  if (arr.element_type == value_type::string) {
    // Grown as elements are read: the count is bounded by the file's size, not by the
    // bytes parsed so far, so reserving it all up front could allocate far too much.
    arr.strings.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, reserve_cap)));
    for (std::uint64_t i = 0; i < count; ++i) {
      std::string str;
      if (status s = read_string(c, limits, "string array element", str); !s) return s;
      arr.strings.push_back(std::move(str));
    }
  } else {
    const std::uint64_t bytes = count * width;
    if (status s = c.need(bytes, "array"); !s) return s;
    const auto raw = c.take(static_cast<std::size_t>(bytes));
    arr.packed.assign(raw.begin(), raw.end());
    if (arr.element_type == value_type::boolean) {
      const auto bad = std::ranges::find_if(arr.packed, [](std::byte b) { return std::to_integer<int>(b) > 1; });
      if (bad != arr.packed.end()) {
        return format_error("BOOL array element is neither 0 nor 1",
                            c.pos() - bytes + static_cast<std::uint64_t>(bad - arr.packed.begin()));
      }
    }
  }
  out = std::move(arr);
  return {};
}

[[nodiscard]] status read_metadata(cursor& c, std::uint64_t count, const parse_limits& limits, header& h,
                                   std::uint64_t& alignment_at) {
  std::unordered_set<std::string> seen;
  h.metadata.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, reserve_cap)));
  for (std::uint64_t i = 0; i < count; ++i) {
    const std::uint64_t at = c.pos();
    metadata_entry entry;
    if (status s = read_string(c, limits, "metadata key", entry.key); !s) return s;
    if (entry.key.empty()) return format_error(fmt::format("metadata key {} is empty", i), at);
    if (!seen.insert(entry.key).second) return format_error("duplicate metadata key '" + entry.key + "'", at);
    if (entry.key == alignment_key) alignment_at = at;
    value_type t{};
    if (status s = read_value_type(c, t, "value type"); !s) return s;
    const status s = t == value_type::array ? read_array(c, entry.val, limits) : read_scalar(c, t, entry.val, limits);
    if (!s) return s;
    h.metadata.push_back(std::move(entry));
  }
  return {};
}

[[nodiscard]] status read_alignment(header& h, std::uint64_t entry_at) {
  const auto it = std::ranges::find(h.metadata, alignment_key, &metadata_entry::key);
  if (it == h.metadata.end()) return {};
  const auto* a = std::get_if<std::uint32_t>(&it->val);
  if (a == nullptr) {
    return format_error("general.alignment must be UINT32, not " + std::string(value_type_name(type_of(it->val))),
                        entry_at);
  }
  if (*a == 0 || !std::has_single_bit(*a)) {
    return format_error(fmt::format("general.alignment {} is not a power of two", *a), entry_at);
  }
  h.alignment = *a;
  return {};
}

[[nodiscard]] bool add_overflows(std::uint64_t a, std::uint64_t b, std::uint64_t& out) noexcept {
  return __builtin_add_overflow(a, b, &out);
}

[[nodiscard]] bool align_up(std::uint64_t x, std::uint64_t alignment, std::uint64_t& out) noexcept {
  return !add_overflows(x, (alignment - x % alignment) % alignment, out);
}

[[nodiscard]] status read_tensor(cursor& c, const parse_limits& limits, std::uint64_t& running, header& h,
                                 tensor_info& t) {
  t.info_offset = c.pos();
  if (status s = read_string(c, limits, "tensor name", t.name); !s) return s;
  auto tensor_error = [&](std::string message, std::uint64_t at) {
    error e = format_error(std::move(message), at);
    e.tensor = t.name;
    return e;
  };
  if (t.name.size() > limits.max_name_bytes) {
    return tensor_error(
        fmt::format("tensor name of {} bytes exceeds the limit of {}", t.name.size(), limits.max_name_bytes),
        t.info_offset);
  }
  const std::uint64_t dims_at = c.pos();
  std::uint32_t n_dims = 0;
  if (status s = c.read(n_dims, "tensor dimension count"); !s) return s;
  if (n_dims > max_dims) {
    return tensor_error(fmt::format("{} dimensions exceed the limit of {}", n_dims, max_dims), dims_at);
  }
  t.shape.resize(n_dims);
  for (std::uint32_t i = 0; i < n_dims; ++i) {
    const std::uint64_t at = c.pos();
    if (status s = c.read(t.shape[n_dims - 1 - i], "tensor dimension"); !s) return s;  // ne[0] is innermost
    if (t.shape[n_dims - 1 - i] > static_cast<std::uint64_t>(INT64_MAX)) {
      return tensor_error(fmt::format("dimension {} exceeds INT64_MAX", t.shape[n_dims - 1 - i]), at);
    }
  }
  const std::uint64_t type_at = c.pos();
  std::uint32_t code = 0;
  if (status s = c.read(code, "tensor type"); !s) return s;
  const type_traits* tr = find_type(code);
  if (tr == nullptr) return tensor_error(fmt::format("unknown or removed ggml type {}", code), type_at);
  t.type = tr->type;
  const detail::tensor_size size = detail::size_of(*tr, t.shape);
  switch (size.problem) {
    case detail::size_problem::none: break;
    case detail::size_problem::dimension_too_large:
    case detail::size_problem::element_overflow: return tensor_error("element count overflows", dims_at);
    case detail::size_problem::partial_block:
      return tensor_error(fmt::format("row length {} is not a multiple of the {} block size {}",
                                      t.shape.empty() ? 1 : t.shape.back(), tr->name, tr->block_elements),
                          dims_at);
    case detail::size_problem::byte_overflow: return tensor_error("byte size overflows", dims_at);
  }
  t.element_count = size.elements;
  t.byte_size = size.bytes;
  const std::uint64_t offset_at = c.pos();
  if (status s = c.read(t.offset, "tensor offset"); !s) return s;
  if (t.offset != running) {
    return tensor_error(fmt::format("data offset {} should be {} (tensors are stored in order, each padded to {})",
                                    t.offset, running, h.alignment),
                        offset_at);
  }
  std::uint64_t end = 0;
  if (add_overflows(running, t.byte_size, end) || !align_up(end, h.alignment, running)) {
    return tensor_error("data size overflows", offset_at);
  }
  return {};
}

[[nodiscard]] status read_tensors(cursor& c, std::uint64_t count, const parse_limits& limits, header& h) {
  std::unordered_set<std::string_view> names;
  h.tensors.reserve(static_cast<std::size_t>(std::min<std::uint64_t>(count, reserve_cap)));
  std::uint64_t running = 0;
  for (std::uint64_t i = 0; i < count; ++i) {
    tensor_info t;
    if (status s = read_tensor(c, limits, running, h, t); !s) return s;
    h.tensors.push_back(std::move(t));
  }
  for (const tensor_info& t : h.tensors) {
    if (!names.insert(t.name).second) {
      error e = format_error("duplicate tensor name '" + t.name + "'", t.info_offset);
      e.tensor = t.name;
      return e;
    }
  }
  h.data_size = running;
  return {};
}

[[nodiscard]] status check_version(std::uint32_t version) {
  if (version == 2 || version == 3) return {};
  if ((version & 0xFFFFU) == 0 && version != 0) {
    return make_error(error_code::unsupported,
                      fmt::format("big-endian GGUF (version {}) is not supported", __builtin_bswap32(version)), 4);
  }
  if (version == 1) {
    return make_error(error_code::unsupported, "GGUF version 1 is not supported (only versions 2 and 3)", 4);
  }
  return make_error(error_code::unsupported, fmt::format("unknown GGUF version {}", version), 4);
}

[[nodiscard]] result<header> parse(cursor& c, std::uint64_t file_size, const parse_limits& limits) {
  std::uint32_t magic = 0;
  if (status s = c.read(magic, "magic"); !s) return s.err();
  if (magic != gguf_magic) return format_error("not a GGUF file (bad magic)", 0);
  header h;
  if (status s = c.read(h.version, "version"); !s) return s.err();
  if (status s = check_version(h.version); !s) return s.err();
  std::uint64_t tensor_count = 0;
  std::uint64_t kv_count = 0;
  if (status s = c.read(tensor_count, "tensor count"); !s) return s.err();
  if (status s = c.read(kv_count, "metadata count"); !s) return s.err();
  if (status s = check_count(c, kv_count, min_kv_bytes, "metadata count", 16); !s) return s.err();
  if (status s = check_count(c, tensor_count, min_tensor_bytes, "tensor count", 8); !s) return s.err();
  std::uint64_t alignment_at = 0;
  if (status s = read_metadata(c, kv_count, limits, h, alignment_at); !s) return s.err();
  if (status s = read_alignment(h, alignment_at); !s) return s.err();
  if (status s = check_count(c, tensor_count, min_tensor_bytes, "tensor count", 8); !s) return s.err();
  if (status s = read_tensors(c, tensor_count, limits, h); !s) return s.err();
  if (!align_up(c.pos(), h.alignment, h.data_start)) return format_error("data offset overflows", c.pos());
  if (!h.tensors.empty()) {
    const tensor_info& last = h.tensors.back();
    const std::uint64_t needed = last.offset + last.byte_size;  // bounded by data_size, which did not overflow
    if (h.data_start > file_size || needed > file_size - h.data_start) {
      error e = format_error(fmt::format("tensor data ends at byte {} of the data section, past the end of the file "
                                         "({} bytes, data starts at {})",
                                         needed, file_size, h.data_start),
                             last.info_offset);
      e.tensor = last.name;
      return e;
    }
  }
  return h;
}

}  // namespace

result<header> parse_header(std::span<const std::byte> bytes, std::uint64_t file_size, const parse_limits& limits,
                            bool* incomplete) {
  cursor c(bytes.first(static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), file_size))), file_size);
  result<header> h = parse(c, file_size, limits);
  if (incomplete != nullptr) *incomplete = !h.ok() && c.incomplete();
  return h;
}

}  // namespace safetensors::gguf
