// SPDX-License-Identifier: Apache-2.0
// The .npy header parser (Python-literal subset, descrs, shapes) and the layout
// conversion. Properties: an accepted header lies inside the input and its byte size is
// the shape's; re-encoding it gives a header that parses back to the same dtype and
// shape; converting data that is present never reads or writes out of bounds.
#include <vector>

#include "fuzz_support.h"
#include "safetensors/formats/npy.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = st_fuzz::as_bytes(data, size);
  // The last byte picks the void override, so both paths get exercised.
  safetensors::numpy::npy_options options;
  if (size > 0 && (data[size - 1] & 1) != 0) options.void_as = safetensors::dtype::F8_E5M2;
  auto h = safetensors::numpy::parse_npy_header(bytes, options);
  auto pre =
      safetensors::numpy::npy_preamble_size(bytes.first(std::min(size, safetensors::numpy::npy_prefix_bytes)), options);
  if (!h) return 0;
  ST_FUZZ_CHECK(pre.ok() && *pre == h->data_offset && h->data_offset <= size);
  const auto expected = safetensors::byte_size(h->type, h->shape);
  ST_FUZZ_CHECK(expected.problem == safetensors::size_problem::none && expected.bytes == h->data_bytes);

  if (auto encoded = safetensors::numpy::npy_encode_header(h->type, h->shape)) {
    auto back = safetensors::numpy::parse_npy_header(std::as_bytes(std::span(*encoded)), options);
    ST_FUZZ_CHECK(back.ok() && back->type == h->type && back->shape == h->shape);
    ST_FUZZ_CHECK(back->data_offset == encoded->size() && back->data_offset % 64 == 0);
  }
  if (h->data_bytes <= size - h->data_offset && h->data_bytes <= (1U << 20)) {
    std::vector<std::byte> out(h->data_bytes);
    ST_FUZZ_CHECK(safetensors::numpy::npy_to_c_order(*h, bytes.subspan(h->data_offset, h->data_bytes), out).ok());
  }
  return 0;
}
