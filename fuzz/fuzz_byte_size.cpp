// SPDX-License-Identifier: Apache-2.0
// parse_byte_size ("5GB", "2GiB", "1.5GB", "123"). Property: a plain decimal number is
// its own value in bytes.
#include <charconv>
#include <string_view>

#include "fuzz_support.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const std::string_view text(reinterpret_cast<const char*>(data), size);
  auto parsed = safetensors::parse_byte_size(text);
  std::uint64_t plain = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), plain);
  if (ec == std::errc() && end == text.data() + text.size() && parsed) ST_FUZZ_CHECK(*parsed == plain);
  return 0;
}
