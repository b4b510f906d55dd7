// SPDX-License-Identifier: Apache-2.0
// The restricted pickle machine and the checkpoint flattening on top of it. Properties:
// no crash, hang or unbounded allocation on any input; an accepted pickle ends inside the
// input; every tensor references a storage that exists; every flattened tensor's view
// fits its storage (so reading it could never leave the storage).
#include "formats/pytorch/torch_tree.h"
#include "fuzz_support.h"
#include "safetensors/formats/pickle.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  torch::pickle_limits limits;
  limits.max_stack = 4096;  // small caps keep each run fast; the logic is the same
  limits.max_memo = 4096;
  limits.max_values = 1 << 16;
  auto doc = torch::unpickle(st_fuzz::as_bytes(data, size), limits);
  if (!doc) {
    ST_FUZZ_CHECK(doc.err().offset.has_value() && *doc.err().offset <= size);
    return 0;
  }
  ST_FUZZ_CHECK(doc->end_offset() <= size);
  for (const auto& t : doc->tensors()) {
    ST_FUZZ_CHECK(t.storage < doc->storages().size());
    ST_FUZZ_CHECK(t.shape.size() == t.strides.size());
  }
  auto tree = torch::detail::flatten_checkpoint(*doc, "", limits.max_nesting, size % 2 == 1);  // strict or not
  if (!tree) return 0;
  for (const auto& t : tree->tensors) {
    const auto& s = doc->storages()[t.storage];
    std::uint64_t last = t.storage_offset;
    bool empty = false;
    for (std::size_t i = 0; i < t.shape.size(); ++i) {
      if (t.shape[i] == 0)
        empty = true;
      else
        last += (t.shape[i] - 1) * t.strides[i];
    }
    ST_FUZZ_CHECK(empty || (last + 1) * (dtype_bits(t.type) / 8) <= s.element_count * s.element_bytes);
  }
  return 0;
}
