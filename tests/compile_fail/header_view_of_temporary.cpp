// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: the tensor list of a temporary header would dangle as soon as the
// statement ends (the same rule covers find(), metadata() and the formats' readers).
#include <cstddef>
#include <span>

#include "safetensors/header.h"

int main() {
  const std::span<const std::byte> bytes;
#ifdef ST_EXPECT_FAILURE
  auto tensors = safetensors::parse_file_bytes(bytes).value().tensors();
#else
  auto h = safetensors::parse_file_bytes(bytes);
  auto tensors = h ? h.value().tensors() : std::span<const safetensors::tensor_info>{};
#endif
  return static_cast<int>(tensors.size());
}
