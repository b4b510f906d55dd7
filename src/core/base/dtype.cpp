// SPDX-License-Identifier: Apache-2.0
// dtype names, widths and size arithmetic.
#include "safetensors/dtype.h"

#include <array>

namespace safetensors {
namespace {

struct dtype_row {
  std::string_view name;
  unsigned bits;
  bool is_float;
};

constexpr std::array<dtype_row, dtype_count> rows = {{
    {"BOOL", 8, false},   {"F4", 4, true},          {"F6_E2M3", 6, true},     {"F6_E3M2", 6, true},
    {"U8", 8, false},     {"I8", 8, false},         {"F8_E5M2", 8, true},     {"F8_E4M3", 8, true},
    {"F8_E8M0", 8, true}, {"F8_E4M3FNUZ", 8, true}, {"F8_E5M2FNUZ", 8, true}, {"I16", 16, false},
    {"U16", 16, false},   {"F16", 16, true},        {"BF16", 16, true},       {"I32", 32, false},
    {"U32", 32, false},   {"F32", 32, true},        {"C64", 64, true},        {"F64", 64, true},
    {"I64", 64, false},   {"U64", 64, false},
}};

constexpr std::array<dtype, dtype_count> every = [] {
  std::array<dtype, dtype_count> out{};
  for (int i = 0; i < dtype_count; ++i) out[static_cast<std::size_t>(i)] = static_cast<dtype>(i);
  return out;
}();

const dtype_row& row(dtype t) noexcept { return rows[static_cast<std::size_t>(t)]; }

}  // namespace

std::span<const dtype> all_dtypes() noexcept { return every; }
std::string_view dtype_name(dtype t) noexcept { return row(t).name; }
unsigned dtype_bits(dtype t) noexcept { return row(t).bits; }
bool dtype_is_float(dtype t) noexcept { return row(t).is_float; }

std::optional<dtype> parse_dtype(std::string_view name) noexcept {
  for (dtype t : every) {
    if (row(t).name == name) return t;
  }
  return std::nullopt;
}

std::optional<std::uint64_t> element_count(std::span<const std::uint64_t> shape) noexcept {
  std::uint64_t n = 1;
  for (std::uint64_t d : shape) {
    if (__builtin_mul_overflow(n, d, &n)) return std::nullopt;
  }
  return n;
}

byte_size_result byte_size(dtype t, std::uint64_t count) noexcept {
  std::uint64_t nbits = 0;
  if (__builtin_mul_overflow(count, std::uint64_t{dtype_bits(t)}, &nbits)) {
    return {0, size_problem::overflow};
  }
  if (nbits % 8 != 0) return {0, size_problem::not_whole_bytes};
  return {nbits / 8, size_problem::none};
}

byte_size_result byte_size(dtype t, std::span<const std::uint64_t> shape) noexcept {
  auto n = element_count(shape);
  if (!n) return {0, size_problem::overflow};
  return byte_size(t, *n);
}

}  // namespace safetensors
