// SPDX-License-Identifier: Apache-2.0
// The writer round trip on every accepted file (see st_fuzz::check_round_trip):
// write(parse(x)) parses back to the same tensors and metadata, writing is idempotent,
// and the streaming writer and serialize produce identical bytes.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto input = safetensors::file::from_buffer(st_fuzz::as_bytes(data, size));
  if (input) st_fuzz::check_round_trip(*input);
  return 0;
}
