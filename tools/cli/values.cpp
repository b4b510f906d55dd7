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

safetensors::status decode_values(safetensors::dtype type, std::span<const std::byte> chunk, std::vector<double>& out) {
  if (type == safetensors::dtype::C64) type = safetensors::dtype::F32;  // (re, im) pairs of float32
  out.resize(elements_in(type, chunk.size()));
  return safetensors::decode_to_f64(type, chunk, out);
}

}  // namespace st_cli
