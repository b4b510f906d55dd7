// SPDX-License-Identifier: Apache-2.0
// Internal: a GGUF tensor's element count and byte size, and the limits on a file, shared
// by the reader and the writer so that both accept exactly the same files.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "safetensors/formats/gguf_types.h"

namespace safetensors::gguf::detail {

/// Dimensions a GGUF tensor may have (ggml's GGML_MAX_DIMS).
inline constexpr std::uint32_t max_dims = 4;
/// The metadata key of the data alignment (a UINT32 power of two; 32 when absent).
inline constexpr std::string_view alignment_key = "general.alignment";

enum class size_problem : std::uint8_t {
  none,
  dimension_too_large,  ///< a dimension above INT64_MAX (ggml reads them as int64)
  element_overflow,     ///< the product of the non-zero dimensions exceeds INT64_MAX
  partial_block,        ///< the row (innermost dimension) is not a whole number of blocks
  byte_overflow,        ///< the byte size exceeds UINT64_MAX
};

struct tensor_size {
  std::uint64_t elements = 0;
  std::uint64_t bytes = 0;
  size_problem problem = size_problem::none;
};

/// Sizes of a row-major `shape` of type `tr`. Zero dimensions do not hide overflow in
/// the others: the product of the non-zero dimensions must fit, whatever their order.
[[nodiscard]] inline tensor_size size_of(const type_traits& tr, std::span<const std::uint64_t> shape) noexcept {
  tensor_size out;
  std::uint64_t nonzero_product = 1;
  bool any_zero = false;
  for (const std::uint64_t d : shape) {
    if (d > static_cast<std::uint64_t>(INT64_MAX)) return {0, 0, size_problem::dimension_too_large};
    if (d == 0) {
      any_zero = true;
    } else if (nonzero_product > static_cast<std::uint64_t>(INT64_MAX) / d) {
      return {0, 0, size_problem::element_overflow};
    } else {
      nonzero_product *= d;
    }
  }
  out.elements = any_zero ? 0 : nonzero_product;
  const std::uint64_t row = shape.empty() ? 1 : shape.back();
  if (row % tr.block_elements != 0) return {0, 0, size_problem::partial_block};
  const std::uint64_t blocks = out.elements / tr.block_elements;
  if (blocks > UINT64_MAX / tr.block_bytes) return {0, 0, size_problem::byte_overflow};
  out.bytes = blocks * tr.block_bytes;
  return out;
}

}  // namespace safetensors::gguf::detail
