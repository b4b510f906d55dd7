// SPDX-License-Identifier: Apache-2.0
// Differential: the header parse as shipped (the schema scan, then the On-Demand walk, each
// falling back to the next when it declines, then the DOM walk), and the On-Demand walk
// without the scan, against the DOM walk alone, the reference. The input is read as a
// whole file (the JSON in place, padded by whatever data follows it) and as bare header
// JSON (copied; its data size learnt from a lenient DOM parse so valid headers get through
// stage 7), and as JSON read in place with the input's last 64 bytes as padding, under
// every policy. Both must give the same error (code, message, offset,
// tensor) or the same header (tensors, metadata, lengths, warnings).
#include "fuzz_support.h"
#include "header/header_builder.h"
#include "header/header_walks.h"

namespace {

using namespace safetensors;
using detail::header_walk;

bool same_result(const result<header>& a, const result<header>& b) {
  if (a.ok() != b.ok()) return false;
  if (!a.ok()) {
    const error& x = a.err();
    const error& y = b.err();
    return x.code == y.code && x.message == y.message && x.offset == y.offset && x.tensor == y.tensor;
  }
  if (!st_fuzz::same_header(*a, *b) || a->header_length() != b->header_length() || a->data_size() != b->data_size() ||
      a->warnings().size() != b->warnings().size()) {
    return false;
  }
  for (std::size_t i = 0; i < a->warnings().size(); ++i) {
    if (a->warnings()[i].message != b->warnings()[i].message || a->warnings()[i].offset != b->warnings()[i].offset) {
      return false;
    }
  }
  for (const tensor_info& t : a->tensors()) {  // the by-name index agrees with the list
    if (a->find(t.name) == nullptr || a->find(t.name)->begin != t.begin) return false;
  }
  return true;
}

/// Each fast walk as shipped against the DOM walk alone, on the three readings of the input.
void compare_walks(std::span<const std::byte> bytes, std::uint64_t json_file_size, const parse_options& o) {
  for (auto fast : {header_walk::scan_then_ondemand_then_dom, header_walk::ondemand_then_dom}) {
    ST_FUZZ_CHECK(same_result(detail::parse_file_bytes_with(fast, bytes, o),
                              detail::parse_file_bytes_with(header_walk::dom_only, bytes, o)));
    ST_FUZZ_CHECK(same_result(detail::parse_header_with(fast, bytes, json_file_size, o, false),
                              detail::parse_header_with(header_walk::dom_only, bytes, json_file_size, o, false)));
    if (bytes.size() > detail::json_padding) {  // in place, the input's last 64 bytes as padding of any content
      const auto json = bytes.first(bytes.size() - detail::json_padding);
      ST_FUZZ_CHECK(same_result(detail::parse_header_with(fast, json, json_file_size, o, true),
                                detail::parse_header_with(header_walk::dom_only, json, json_file_size, o, true)));
    }
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto bytes = st_fuzz::as_bytes(data, size);
  const parse_options lenient{validation_policy::lenient, std::nullopt};
  auto probe = detail::parse_header_with(header_walk::dom_only, bytes, UINT64_MAX / 2, lenient, false);
  const std::uint64_t json_file_size = 8 + size + (probe ? probe->data_size() : 0);
  for (auto policy : {validation_policy::strict, validation_policy::reference, validation_policy::lenient}) {
    compare_walks(bytes, json_file_size, parse_options{policy, std::nullopt});
  }
  // Tight limits, so that each one is reached by small inputs.
  limits tight;
  tight.max_tensors = 2;
  tight.max_rank = 2;
  tight.max_name_bytes = 6;
  tight.max_metadata_bytes = 12;
  compare_walks(bytes, json_file_size, parse_options{validation_policy::reference, tight});
  return 0;
}
