// SPDX-License-Identifier: Apache-2.0
// Internal: NumPy descr strings ("<f4", ">i8", "|V2") to SafeTensors dtypes.
#pragma once

#include "formats/numpy/py_literal.h"
#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/formats/npy.h"

namespace safetensors::numpy::detail {

struct npy_type {
  dtype type = dtype::U8;
  bool big_endian = false;  // elements must be byteswapped
};

/// Errors: InvalidFormat (not a descr), Unsupported (a NumPy type SafeTensors lacks),
/// InvalidArgument (a `void_as` whose width does not match).
[[nodiscard]] result<npy_type> parse_npy_descr(const py_value& descr, const npy_options& options);

/// Bytes swapped as one unit: the element width, or half of it for complex.
[[nodiscard]] std::size_t npy_swap_width(dtype type) noexcept;

}  // namespace safetensors::numpy::detail

namespace safetensors::numpy::detail {

/// Byteswaps big-endian elements in place (no-op for little-endian headers).
void npy_swap_in_place(const npy_header& header, std::span<std::byte> data) noexcept;

}  // namespace safetensors::numpy::detail
