// SPDX-License-Identifier: Apache-2.0
// Tensors grouped by dotted name prefix ("model.layers.0.attn.q.weight"), for inspect --tree.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>

#include "mlx_summary.h"
#include "safetensors/header.h"

namespace st_cli {

/// Orders name components naturally: numbers by value ("2" before "10"), then text.
struct natural_less {
  bool operator()(const std::string& a, const std::string& b) const;
};

struct name_tree {
  std::string label;  ///< the component(s) this node adds to its parent's name
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;
  std::uint64_t tensors = 0;
  const safetensors::tensor_info* leaf = nullptr;  ///< the tensor whose full name ends here
  std::map<std::string, name_tree, natural_less> children;
};

/// Builds the tree; chains of single-child groups are merged ("model.layers"). Parameters
/// are counted as param_count does (quantized weights by their logical size).
[[nodiscard]] name_tree build_name_tree(std::span<const safetensors::tensor_info* const> tensors,
                                        const param_overrides& overrides = {});
/// Prints it indented; `max_depth` < 0 means every level.
void print_name_tree(const name_tree& root, int max_depth);
/// {"name":..., "params":..., "bytes":..., "tensors":..., "dtype"/"shape" for leaves, "children":[...]}
[[nodiscard]] std::string name_tree_json(const name_tree& root);

}  // namespace st_cli
