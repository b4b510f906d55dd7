// SPDX-License-Identifier: Apache-2.0
// GGUF metadata carried in a SafeTensors `__metadata__` (the reverse conversion's input).
// Properties: whatever typed metadata a header yields, writing it back gives a map that
// reads again without error and round-trips to itself (text, so NaN compares equal).
#include "fuzz_support.h"
#include "safetensors/formats/gguf_metadata.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  auto h = parse_file_bytes(st_fuzz::as_bytes(data, size), parse_options{validation_policy::lenient, std::nullopt});
  if (!h || !h->metadata()) return 0;
  auto typed = gguf::from_safetensors_metadata(*h->metadata());
  if (!typed) return 0;
  auto written = gguf::to_safetensors_metadata(*typed);
  ST_FUZZ_CHECK(written.ok());
  auto reread = gguf::from_safetensors_metadata(*written);
  ST_FUZZ_CHECK(reread.ok());
  auto rewritten = gguf::to_safetensors_metadata(*reread);
  ST_FUZZ_CHECK(rewritten.ok() && *rewritten == *written);
  return 0;
}
