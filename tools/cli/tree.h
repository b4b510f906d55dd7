// SPDX-License-Identifier: Apache-2.0
// Tensors grouped by dotted name prefix ("model.layers.0.attn.q.weight"), for inspect --tree.
#pragma once

#include <cstdint>
#include <map>
#include <span>
#include <string>
#include <vector>

namespace st_cli {

/// Orders name components naturally: numbers by value ("2" before "10"), then text.
struct natural_less {
  bool operator()(const std::string& a, const std::string& b) const;
};

/// A tensor as the tree shows it, whatever file format it comes from.
struct tree_tensor {
  std::string name;
  std::string type;  ///< "F32", or GGUF's "Q8_0"
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;
  std::uint64_t params = 0;  ///< logical parameters (MLX quantized weights: rows x in)
};

struct name_tree {
  name_tree() = default;
  name_tree(const name_tree&) = delete;
  name_tree& operator=(const name_tree&) = delete;
  name_tree(name_tree&&) = default;
  name_tree& operator=(name_tree&&) = default;
  /// Without recursion: a valid file can make the tree thousands of levels deep.
  ~name_tree();

  std::string label;  ///< the component(s) this node adds to its parent's name
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;
  std::uint64_t tensors = 0;
  const tree_tensor* leaf = nullptr;  ///< the tensor whose full name ends here
  std::map<std::string, name_tree, natural_less> children;
};

/// Builds the tree over `tensors` (which must outlive it); chains of single-child groups
/// are merged ("model.layers").
[[nodiscard]] name_tree build_name_tree(std::span<const tree_tensor> tensors);
/// Prints it indented; `max_depth` < 0 means every level.
void print_name_tree(const name_tree& root, int max_depth);
/// {"name":..., "params":..., "bytes":..., "tensors":..., "dtype"/"shape" for leaves, "children":[...]}
[[nodiscard]] std::string name_tree_json(const name_tree& root);

}  // namespace st_cli
