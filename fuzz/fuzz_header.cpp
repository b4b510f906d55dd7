// SPDX-License-Identifier: Apache-2.0
// Header parse + validate under every policy. Properties: parse_file_bytes and
// file::from_buffer give the same verdict; strict accepts => reference accepts =>
// lenient accepts, with the same tensors and metadata.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  const auto bytes = st_fuzz::as_bytes(data, size);
  std::optional<header> accepted[3];
  for (auto policy : {validation_policy::strict, validation_policy::reference, validation_policy::lenient}) {
    parse_options o{policy, std::nullopt};
    auto h = parse_file_bytes(bytes, o);
    ST_FUZZ_CHECK(st_fuzz::verdict(h) == st_fuzz::verdict(file::from_buffer(bytes, o)));
    if (h) accepted[static_cast<int>(policy)] = std::move(h).value();
  }
  const auto& [reference, strict, lenient] = accepted;
  if (strict) ST_FUZZ_CHECK(reference && st_fuzz::same_header(*strict, *reference));
  if (reference) ST_FUZZ_CHECK(lenient && st_fuzz::same_header(*reference, *lenient));
  return 0;
}
