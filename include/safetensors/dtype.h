// SPDX-License-Identifier: Apache-2.0
/// \file dtype.h
/// The 22 element types of the format, in the reference's enum order (the writer
/// sorts by it), with their names, bit widths and overflow-checked size arithmetic.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string_view>

namespace safetensors {

/// Element type. The numeric order is the reference's declaration order.
enum class dtype : std::uint8_t {
  BOOL,
  F4,
  F6_E2M3,
  F6_E3M2,
  U8,
  I8,
  F8_E5M2,
  F8_E4M3,
  F8_E8M0,
  F8_E4M3FNUZ,
  F8_E5M2FNUZ,
  I16,
  U16,
  F16,
  BF16,
  I32,
  U32,
  F32,
  C64,
  F64,
  I64,
  U64,
};

inline constexpr int dtype_count = 22;

/// Every dtype in enum order.
[[nodiscard]] std::span<const dtype> all_dtypes() noexcept;

/// The exact, case-sensitive name used in headers ("BF16", "F8_E4M3", ...).
[[nodiscard]] std::string_view dtype_name(dtype t) noexcept;

/// Parses an exact name; nullopt for anything else ("bf16", "F128", ...).
[[nodiscard]] std::optional<dtype> parse_dtype(std::string_view name) noexcept;

/// Bits per element: 4 for F4, 6 for F6_*, 8 to 64 otherwise.
[[nodiscard]] unsigned dtype_bits(dtype t) noexcept;

/// True for the floating-point types, complex included.
[[nodiscard]] bool dtype_is_float(dtype t) noexcept;

/// True for F4 and F6_*: elements do not fill whole bytes.
[[nodiscard]] inline bool dtype_is_sub_byte(dtype t) noexcept { return dtype_bits(t) % 8 != 0; }

/// Element count of a shape (1 for a scalar), folded left to right from 1 with
/// checked multiplication like the reference; nullopt on overflow.
[[nodiscard]] std::optional<std::uint64_t> element_count(std::span<const std::uint64_t> shape) noexcept;

/// Why a tensor's byte size cannot be computed.
enum class size_problem : std::uint8_t { none, overflow, not_whole_bytes };

/// Byte size of `count` elements of `t`: overflow-checked, and sub-byte counts must
/// fill whole bytes (the reference's MisalignedSlice).
struct byte_size_result {
  std::uint64_t bytes = 0;
  size_problem problem = size_problem::none;
};
[[nodiscard]] byte_size_result byte_size(dtype t, std::uint64_t count) noexcept;

/// Byte size of a whole shape: element_count then byte_size.
[[nodiscard]] byte_size_result byte_size(dtype t, std::span<const std::uint64_t> shape) noexcept;

}  // namespace safetensors
