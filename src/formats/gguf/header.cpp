// SPDX-License-Identifier: Apache-2.0
// Value-type names and sizes, header lookups, and the pread-backed reader (gguf.h).

#include <algorithm>
#include <array>
#include <utility>

#include "safetensors/formats/gguf.h"

namespace safetensors::gguf {
namespace {

constexpr std::array<std::string_view, 13> value_type_names{"UINT8",  "INT8",    "UINT16", "INT16",  "UINT32",
                                                            "INT32",  "FLOAT32", "BOOL",   "STRING", "ARRAY",
                                                            "UINT64", "INT64",   "FLOAT64"};
constexpr std::array<std::size_t, 13> value_type_sizes{1, 1, 2, 2, 4, 4, 4, 1, 0, 0, 8, 8, 8};

// The header is read in growing prefixes: most are small, a few carry megabytes of tokenizer.
constexpr std::size_t first_read_bytes = std::size_t{1} << 20;

}  // namespace

std::string_view value_type_name(value_type t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < value_type_names.size() ? value_type_names[i] : "UNKNOWN";
}

std::optional<value_type> parse_value_type(std::string_view name) noexcept {
  const auto it = std::ranges::find(value_type_names, name);
  if (it == value_type_names.end()) return std::nullopt;
  return static_cast<value_type>(it - value_type_names.begin());
}

std::size_t value_type_size(value_type t) noexcept {
  const auto i = static_cast<std::size_t>(t);
  return i < value_type_sizes.size() ? value_type_sizes[i] : 0;
}

std::uint64_t array_value::size() const noexcept {
  if (element_type == value_type::string) return strings.size();
  const std::size_t width = value_type_size(element_type);
  return width == 0 ? 0 : packed.size() / width;
}

const value* header::find(std::string_view key) const noexcept {
  const auto it = std::ranges::find(metadata, key, &metadata_entry::key);
  return it == metadata.end() ? nullptr : &it->val;
}

const tensor_info* header::find_tensor(std::string_view name) const noexcept {
  const auto it = std::ranges::find(tensors, name, &tensor_info::name);
  return it == tensors.end() ? nullptr : &*it;
}

result<reader> reader::open(const std::string& path, const parse_limits& limits) {
  auto file = readonly_file::open(path);
  if (!file) return std::move(file).err();
  const std::uint64_t size = file->size();
  std::vector<std::byte> prefix;
  std::uint64_t want = std::min<std::uint64_t>(size, first_read_bytes);
  for (;;) {
    prefix.resize(static_cast<std::size_t>(want));
    if (status s = file->read_at(0, prefix); !s) return std::move(s).err();
    bool incomplete = false;
    result<gguf::header> h = parse_header(prefix, size, limits, &incomplete);
    if (h) return reader(std::move(file).value(), std::move(h).value());
    if (!incomplete) return std::move(h).err().with_path(path);
    want = std::min<std::uint64_t>(size, want * 2);
  }
}

status reader::read(const tensor_info& t, std::uint64_t offset, std::span<std::byte> dst) const {
  if (offset > t.byte_size || dst.size() > t.byte_size - offset) {
    return make_error(error_code::invalid_argument, "read past the end of the tensor", std::nullopt, t.name);
  }
  return file_.read_at(header_.data_start + t.offset + offset, dst);
}

}  // namespace safetensors::gguf
