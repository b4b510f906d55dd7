// SPDX-License-Identifier: Apache-2.0
#include "values.h"

#include <bit>
#include <cstring>

#include "safetensors/convert.h"

namespace st_cli {

namespace {
std::size_t elements_in(safetensors::dtype type, std::size_t bytes) {
  return bytes * 8 / safetensors::dtype_bits(type);
}
}  // namespace

bool castable(safetensors::dtype t) { return safetensors::dtype_is_float(t) && t != safetensors::dtype::C64; }

safetensors::status decode_values(safetensors::dtype type, std::span<const std::byte> chunk, std::vector<double>& out) {
  if (type == safetensors::dtype::C64) type = safetensors::dtype::F32;  // (re, im) pairs of float32
  out.resize(elements_in(type, chunk.size()));
  return safetensors::decode_to_f64(type, chunk, out);
}

safetensors::status convert_chunk(safetensors::dtype from, safetensors::dtype to, std::span<const std::byte> chunk,
                                  std::vector<float>& scratch32, std::vector<double>& scratch64,
                                  std::vector<std::byte>& out, const safetensors::encode_options& options) {
  static_assert(std::endian::native == std::endian::little, "tensor bytes are little-endian");
  const std::size_t n = elements_in(from, chunk.size());
  out.resize(n * safetensors::dtype_bits(to) / 8);
  if (to == safetensors::dtype::F64) {
    scratch64.resize(n);
    if (auto s = safetensors::decode_to_f64(from, chunk, scratch64); !s) return s;
    if (n > 0) std::memcpy(out.data(), scratch64.data(), out.size());
    return {};
  }
  scratch32.resize(n);
  if (auto s = safetensors::decode_to_f32(from, chunk, scratch32); !s) return s;
  return safetensors::encode_from_f32(to, scratch32, out, options);
}

}  // namespace st_cli
