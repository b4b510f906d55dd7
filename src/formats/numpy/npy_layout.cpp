// SPDX-License-Identifier: Apache-2.0
// Array data into SafeTensors order: Fortran-order transposition and byteswapping.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <vector>

#include "formats/numpy/npy_descr.h"
#include "safetensors/formats/npy.h"

namespace safetensors::numpy {
namespace {

void swap_units(std::byte* p, std::size_t bytes, std::size_t unit) {
  for (std::size_t at = 0; at < bytes; at += unit) std::reverse(p + at, p + at + unit);
}

}  // namespace

void detail::npy_swap_in_place(const npy_header& header, std::span<std::byte> data) noexcept {
  const std::size_t unit = npy_swap_width(header.type);
  if (header.big_endian && unit > 1) swap_units(data.data(), data.size(), unit);
}

status npy_to_c_order(const npy_header& header, std::span<const std::byte> data, std::span<std::byte> out) {
  if (data.size() != header.data_bytes || out.size() != header.data_bytes) {
    return make_error(error_code::invalid_argument,
                      fmt::format("npy data of {} bytes and output of {} bytes; the array has {}", data.size(),
                                  out.size(), header.data_bytes));
  }
  const std::size_t width = dtype_bits(header.type) / 8;
  if (!header.needs_transpose()) {
    if (!data.empty()) std::memcpy(out.data(), data.data(), data.size());
    detail::npy_swap_in_place(header, out);
    return {};
  }
  // Fortran strides (in elements): the first index varies fastest in the source.
  const std::size_t rank = header.shape.size();
  std::vector<std::uint64_t> stride(rank);
  std::uint64_t s = 1;
  for (std::size_t k = 0; k < rank; ++k) {
    stride[k] = s;
    s *= header.shape[k];
  }
  std::vector<std::uint64_t> index(rank, 0);
  const std::uint64_t count = header.data_bytes / width;
  const std::uint64_t last = header.shape[rank - 1];
  const std::uint64_t last_stride = stride[rank - 1];
  std::uint64_t base = 0;  // source element of index with its last coordinate at 0
  std::byte* dst = out.data();
  for (std::uint64_t done = 0; done < count; done += last) {
    for (std::uint64_t j = 0; j < last; ++j) {
      std::memcpy(dst, data.data() + (base + j * last_stride) * width, width);
      dst += width;
    }
    // Advance the odometer over every dimension but the last.
    for (std::size_t k = rank - 1; k-- > 0;) {
      if (++index[k] < header.shape[k]) {
        base += stride[k];
        break;
      }
      base -= stride[k] * (header.shape[k] - 1);
      index[k] = 0;
    }
  }
  detail::npy_swap_in_place(header, out);
  return {};
}

}  // namespace safetensors::numpy
