// SPDX-License-Identifier: Apache-2.0
/// \file gguf.h
/// Reading GGUF (llama.cpp / ggml) files, versions 2 and 3, little-endian.
///
/// On-disk layout (all integers little-endian):
///
///     u32 magic "GGUF" | u32 version | u64 tensor_count | u64 kv_count
///     kv[kv_count]:          string key | u32 value_type | value
///     tensor[tensor_count]:  string name | u32 n_dims | u64 ne[n_dims] | u32 ggml_type | u64 offset
///     zero padding to the alignment | tensor data (each tensor at data_start + offset)
///
/// A string is a u64 length and that many bytes (no NUL). An array value is a u32
/// element type, a u64 count and the elements. `ne[0]` is the fastest-varying
/// dimension, so `shape` here is `ne` reversed (row-major, as SafeTensors). The
/// alignment is `general.alignment` (a UINT32 power of two), 32 when absent.
///
/// The parser distrusts every count and size before allocating (as ggml's reader):
/// counts above the bytes left, strings over 1 GiB, arrays over 1 G elements, nested
/// arrays, empty or duplicate keys, names of 64 bytes or more, duplicate tensor names,
/// more than 4 dimensions, element counts or byte sizes that overflow, a row length
/// that is not a whole number of blocks, unknown or removed types, and offsets that
/// differ from the running padded size (tensors stored in info order) are all errors
/// (`invalid_format`, with the byte offset). Version 1 and big-endian files are refused
/// (`unsupported`) with a message that says which.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/formats/gguf_types.h"
#include "safetensors/lifetimebound.h"
#include "safetensors/readonly_file.h"

namespace safetensors::gguf {

/// Metadata value types, numbered as in the file.
enum class value_type : std::uint32_t {
  uint8 = 0,
  int8 = 1,
  uint16 = 2,
  int16 = 3,
  uint32 = 4,
  int32 = 5,
  float32 = 6,
  boolean = 7,
  string = 8,
  array = 9,
  uint64 = 10,
  int64 = 11,
  float64 = 12,
};

/// "UINT8", "INT8", ..., "STRING", "ARRAY", ..., "FLOAT64" (the spec's names).
[[nodiscard]] std::string_view value_type_name(value_type t) noexcept;
/// Parses the names above; false for anything else.
[[nodiscard]] std::optional<value_type> parse_value_type(std::string_view name) noexcept;
/// Bytes of one element of a fixed-size type (0 for STRING and ARRAY).
[[nodiscard]] std::size_t value_type_size(value_type t) noexcept;

/// An array value: elements of one scalar type. Numbers are kept packed as in the file
/// (little-endian, value_type_size bytes each) so memory stays proportional to the file.
struct array_value {
  value_type element_type = value_type::uint8;
  std::vector<std::byte> packed;     ///< numeric and BOOL elements
  std::vector<std::string> strings;  ///< STRING elements

  [[nodiscard]] std::uint64_t size() const noexcept;
  friend bool operator==(const array_value&, const array_value&) = default;
};

/// A metadata value; the alternative's index is the value_type code.
using value = std::variant<std::uint8_t, std::int8_t, std::uint16_t, std::int16_t, std::uint32_t, std::int32_t, float,
                           bool, std::string, array_value, std::uint64_t, std::int64_t, double>;

[[nodiscard]] inline value_type type_of(const value& v) noexcept { return static_cast<value_type>(v.index()); }

struct metadata_entry {
  std::string key;
  value val;
};

/// One tensor's entry.
struct tensor_info {
  std::string name;
  std::vector<std::uint64_t> shape;  ///< row-major: ne reversed
  ggml_type type = ggml_type::f32;
  std::uint64_t offset = 0;  ///< relative to the data section
  std::uint64_t element_count = 0;
  std::uint64_t byte_size = 0;
  std::uint64_t info_offset = 0;  ///< where the entry starts in the file (for messages)
};

/// A parsed GGUF header: everything but the tensor data.
struct header {
  std::uint32_t version = 3;
  std::uint64_t alignment = 32;
  std::vector<metadata_entry> metadata;  ///< file order
  std::vector<tensor_info> tensors;      ///< file order
  std::uint64_t data_start = 0;          ///< file offset of the data section
  std::uint64_t data_size = 0;           ///< padded end of the last tensor

  [[nodiscard]] const value* find(std::string_view key) const noexcept;
  [[nodiscard]] const tensor_info* find_tensor(std::string_view name) const noexcept;
};

/// Caps applied while parsing (ggml's, by default).
struct parse_limits {
  std::uint64_t max_string_bytes = std::uint64_t{1} << 30;
  std::uint64_t max_array_elements = std::uint64_t{1} << 30;
  std::uint64_t max_name_bytes = 63;
};

/// Parses the header from the first bytes of a file of `file_size` bytes (`bytes` may be
/// the whole file or a prefix). Tensor extents are checked against `file_size`. When
/// `bytes` ends before the header does but the file is longer, the error is
/// `invalid_format` and `*incomplete` (if given) is set: call again with more bytes.
/// No I/O.
[[nodiscard]] result<header> parse_header(std::span<const std::byte> bytes, std::uint64_t file_size,
                                          const parse_limits& limits = {}, bool* incomplete = nullptr);

/// An open GGUF file: its header, and tensor bytes read on request with pread (nothing
/// is mapped, so memory stays bounded however large the file). Move-only.
class reader {
 public:
  /// Opens and parses `path`. Errors carry `path`.
  [[nodiscard]] static result<reader> open(const std::string& path, const parse_limits& limits = {});

  [[nodiscard]] const gguf::header& header() const& noexcept SAFETENSORS_LIFETIMEBOUND { return header_; }
  const gguf::header& header() const&& = delete;
  [[nodiscard]] const std::string& path() const noexcept { return file_.path(); }
  /// Reads `dst.size()` bytes of tensor `t` starting `offset` bytes into it.
  [[nodiscard]] status read(const tensor_info& t, std::uint64_t offset, std::span<std::byte> dst) const;

 private:
  reader(readonly_file file, gguf::header h) noexcept : file_(std::move(file)), header_(std::move(h)) {}
  readonly_file file_;
  gguf::header header_;
};

}  // namespace safetensors::gguf
