// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/chunk_cast.h"

#include <bit>
#include <cstring>

namespace safetensors::pipeline {

bool castable(dtype t) noexcept { return dtype_is_float(t) && t != dtype::C64; }

status decode_values(dtype type, std::span<const std::byte> chunk, std::vector<double>& out) {
  if (type == dtype::C64) type = dtype::F32;  // (re, im) pairs of float32
  out.resize(chunk.size() * 8 / dtype_bits(type));
  return decode_to_f64(type, chunk, out);
}

status chunk_caster::cast(dtype from, dtype to, std::span<const std::byte> chunk, std::vector<std::byte>& out,
                          const encode_options& options) {
  static_assert(std::endian::native == std::endian::little, "tensor bytes are little-endian");
  const std::size_t n = chunk.size() * 8 / dtype_bits(from);
  out.resize(n * dtype_bits(to) / 8);
  if (to == dtype::F64) {
    f64_.resize(n);
    if (auto s = decode_to_f64(from, chunk, f64_); !s) return s;
    if (n > 0) std::memcpy(out.data(), f64_.data(), out.size());
    return {};
  }
  f32_.resize(n);
  if (auto s = decode_to_f32(from, chunk, f32_); !s) return s;
  return encode_from_f32(to, f32_, out, options);
}

}  // namespace safetensors::pipeline
