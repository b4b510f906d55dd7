// SPDX-License-Identifier: Apache-2.0
// The GGUF header parser, dequantization and writer. Properties: an accepted header has
// tensors tiling its data section in order; dequantizing any supported tensor whose bytes
// are in the input succeeds; writing the parsed header back and parsing that gives the
// same tensors and metadata (general.alignment aside: the writer sets 32); the
// __metadata__ text form reads back to the same values.
#include <algorithm>
#include <vector>

#include "fuzz_support.h"
#include "safetensors/formats/gguf.h"
#include "safetensors/formats/gguf_dequantize.h"
#include "safetensors/formats/gguf_metadata.h"
#include "safetensors/formats/gguf_writer.h"

namespace {

namespace gguf = safetensors::gguf;

bool same_value(const gguf::value& a, const gguf::value& b) {
  return gguf::type_tag(a) == gguf::type_tag(b) && gguf::to_text(a) == gguf::to_text(b);
}

void check_dequantize(std::span<const std::byte> input, const gguf::header& h) {
  std::vector<float> values;
  for (const gguf::tensor_info& t : h.tensors) {
    const std::uint64_t begin = h.data_start + t.offset;
    if (!gguf::traits(t.type).dequantizable || t.byte_size > input.size() || begin > input.size() - t.byte_size) {
      continue;
    }
    values.resize(static_cast<std::size_t>(t.element_count));
    const auto s = gguf::dequantize(t.type, input.subspan(static_cast<std::size_t>(begin), t.byte_size), values);
    ST_FUZZ_CHECK(s.ok());
  }
}

void check_rewrite(const gguf::header& h) {
  std::vector<gguf::tensor_spec> specs;
  for (const gguf::tensor_info& t : h.tensors) specs.push_back({t.name, t.type, t.shape});
  auto plan = gguf::write_plan::make(h.metadata, specs);
  if (!plan) std::fprintf(stderr, "write_plan: %s\n", plan.err().to_string().c_str());
  ST_FUZZ_CHECK(plan.ok());
  auto again = gguf::parse_header(plan->header_bytes(), plan->file_size());
  ST_FUZZ_CHECK(again.ok());
  ST_FUZZ_CHECK(again->tensors.size() == h.tensors.size());
  for (std::size_t i = 0; i < h.tensors.size(); ++i) {
    const auto& a = h.tensors[i];
    const auto& b = again->tensors[i];
    ST_FUZZ_CHECK(a.name == b.name && a.type == b.type && a.shape == b.shape && a.byte_size == b.byte_size);
  }
  for (const gguf::metadata_entry& e : h.metadata) {
    if (e.key == "general.alignment") continue;
    const gguf::value* v = again->find(e.key);
    ST_FUZZ_CHECK(v != nullptr && same_value(*v, e.val));
  }
}

void check_metadata_text(const gguf::header& h) {
  auto text = gguf::to_safetensors_metadata(h.metadata);
  if (!text) return;  // the reserved key
  auto back = gguf::from_safetensors_metadata(*text);
  if (!back) return;  // text that is not UTF-8 does not survive JSON
  ST_FUZZ_CHECK(back->size() == h.metadata.size());
  for (std::size_t i = 0; i < h.metadata.size(); ++i) {
    ST_FUZZ_CHECK((*back)[i].key == h.metadata[i].key && same_value((*back)[i].val, h.metadata[i].val));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  const auto input = st_fuzz::as_bytes(data, size);
  auto h = gguf::parse_header(input, size);
  if (!h) return 0;
  std::uint64_t expected = 0;
  for (const gguf::tensor_info& t : h->tensors) {
    ST_FUZZ_CHECK(t.offset == expected);
    expected += t.byte_size + (h->alignment - t.byte_size % h->alignment) % h->alignment;
  }
  ST_FUZZ_CHECK(expected == h->data_size);
  check_dequantize(input, *h);
  check_rewrite(*h);
  check_metadata_text(*h);
  return 0;
}
