// SPDX-License-Identifier: Apache-2.0
// The header JSON alone (no length prefix to keep consistent, so mutations explore the
// JSON). The data size is learnt from a lenient parse against an unbounded file; when the
// header is valid, the file it describes is built and must be accepted by every reader
// with the same header, and must survive the writer round trip.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  const auto json = st_fuzz::as_bytes(data, size);
  auto probe = parse_header(json, UINT64_MAX, {validation_policy::lenient, std::nullopt});
  if (!probe || probe->data_size() > (1U << 20)) return 0;
  std::vector<std::byte> bytes(8 + size + probe->data_size());
  for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>((std::uint64_t{size} >> (8 * i)) & 0xff);
  std::copy(json.begin(), json.end(), bytes.begin() + 8);
  for (std::size_t i = 8 + size; i < bytes.size(); ++i) bytes[i] = static_cast<std::byte>(i * 31);
  auto exact = parse_header(json, bytes.size());
  ST_FUZZ_CHECK(exact.ok() && st_fuzz::same_header(*exact, *probe));
  auto f = file::from_buffer(bytes);
  ST_FUZZ_CHECK(f.ok() && st_fuzz::same_header(f->header(), *probe));
  st_fuzz::check_round_trip(*f);
  return 0;
}
