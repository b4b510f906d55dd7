// SPDX-License-Identifier: Apache-2.0
// Differential: the header JSON through (1) the free parse_header, (2) one header_parser
// reused across every input, each header it accepts handed back to it (recycle), and (3)
// parse_header again on a copy whose float-valued numbers (serde_json's reading) are
// spelled `0.0` plus spaces. All three must give the same verdict, and (1) and (2) the same
// header: reused buffers and recycled headers never leak between inputs, and a float's
// value never matters (the schema only asks whether a number is a float, which is what the
// big-integer fallback of header_parse.cpp relies on).
#include "fuzz_support.h"
#include "json/serde_number.h"
#include "safetensors/json_text.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  static header_parser reused;
  const auto json = st_fuzz::as_bytes(data, size);
  const std::uint64_t file_size = 8 + size + 64;  // a data size the header may or may not describe
  auto free_parse = parse_header(json, file_size);
  auto own_parse = reused.parse(json, file_size);
  ST_FUZZ_CHECK(free_parse.ok() == own_parse.ok());
  if (free_parse) {
    ST_FUZZ_CHECK(header_to_json(*free_parse) == header_to_json(*own_parse));
    ST_FUZZ_CHECK(free_parse->data_size() == own_parse->data_size());
    for (const tensor_info& t : own_parse->tensors()) ST_FUZZ_CHECK(own_parse->find(t.name) == &t);
    reused.recycle(std::move(*own_parse));
  } else {
    ST_FUZZ_CHECK(free_parse.err().code == own_parse.err().code);
  }

  std::string respelled(reinterpret_cast<const char*>(data), size);
  const std::string original = respelled;
  detail::for_each_number_token(original, [&](std::size_t at, std::string_view token) {
    if (token.size() >= 3 && detail::classify_serde_number(token) == detail::serde_number::floating) {
      respelled.replace(at, token.size(), token.size(), ' ');
      respelled.replace(at, 3, "0.0");
    }
  });
  auto respelled_parse = parse_header(std::as_bytes(std::span(respelled.data(), respelled.size())), file_size);
  ST_FUZZ_CHECK(respelled_parse.ok() == free_parse.ok());
  if (!free_parse) ST_FUZZ_CHECK(respelled_parse.err().code == free_parse.err().code);
  return 0;
}
