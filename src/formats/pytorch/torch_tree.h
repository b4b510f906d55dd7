// SPDX-License-Identifier: Apache-2.0
// Internal: from an unpickled checkpoint object to named tensors. Selects `key`, flattens
// nested dicts with '.', lists the rest as skipped, and checks every tensor's dtype and
// view against its storage.
#pragma once

#include <string>
#include <vector>

#include "safetensors/formats/pickle.h"
#include "safetensors/formats/pytorch.h"

namespace safetensors::torch::detail {

struct torch_tree {
  std::vector<tensor> tensors;
  std::vector<skipped_value> skipped;
};

/// Errors carry no path (the caller adds it). `strict`: an object outside the allowlist
/// or a tensor SafeTensors cannot hold is an error instead of a skipped entry.
[[nodiscard]] result<torch_tree> flatten_checkpoint(const pickle_document& doc, const std::string& key,
                                                    std::size_t max_nesting, bool strict);

}  // namespace safetensors::torch::detail
