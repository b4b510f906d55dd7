// SPDX-License-Identifier: Apache-2.0
#include "tree.h"

#include <algorithm>
#include <vector>

#include <fmt/format.h>

#include "count_text.h"
#include "report.h"
#include "safetensors/json_text.h"

namespace st_cli {
namespace {

bool all_digits(const std::string& s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

/// Recurses once per level of the merged tree, whose depth is bounded by branching: a path
/// of depth d needs d names sharing ever longer prefixes (d * d header bytes). A chain (one
/// long name: a component per 2 header bytes) is merged in a loop, its label joined once.
void merge_chains(name_tree& node) {
  for (auto& [key, child] : node.children) {
    if (child.leaf == nullptr && child.children.size() == 1) {
      std::string label = std::move(child.label);
      while (child.leaf == nullptr && child.children.size() == 1) {
        name_tree only = std::move(child.children.begin()->second);
        label += '.';
        label += only.label;
        child = std::move(only);
      }
      child.label = std::move(label);
    }
    merge_chains(child);
  }
}

struct line {
  std::string left;
  std::string params;
  std::string right;
};

void collect(const name_tree& node, int depth, int max_depth, std::vector<line>& out) {
  for (const auto& [key, child] : node.children) {
    std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
    std::string right = child.leaf != nullptr
                            ? fmt::format("{} [{}]", child.leaf->type, fmt::join(child.leaf->shape, ", "))
                            : count_of(child.tensors, "tensor");
    if (child.leaf != nullptr && !child.children.empty()) right += fmt::format(" (+{} below)", child.tensors - 1);
    out.push_back({indent + printable_text(child.label), with_commas(child.params), printable_text(right)});
    if (max_depth < 0 || depth + 1 <= max_depth) collect(child, depth + 1, max_depth, out);
  }
}

void append_json(const name_tree& node, std::string& out) {
  out += fmt::format(R"({{"name":{},"params":{},"bytes":{},"tensors":{})", safetensors::json_quote(node.label),
                     node.params, node.bytes, node.tensors);
  if (node.leaf != nullptr) {
    out += fmt::format(R"(,"dtype":{},"shape":[{}])", safetensors::json_quote(node.leaf->type),
                       fmt::join(node.leaf->shape, ","));
  }
  out += R"(,"children":[)";
  bool first = true;
  for (const auto& [key, child] : node.children) {
    if (!first) out += ',';
    first = false;
    append_json(child, out);
  }
  out += "]}";
}

}  // namespace

bool natural_less::operator()(const std::string& a, const std::string& b) const {
  const bool da = all_digits(a);
  const bool db = all_digits(b);
  if (da && db) return a.size() != b.size() ? a.size() < b.size() : a < b;
  if (da != db) return da;  // numbered groups (layers) first
  return a < b;
}

name_tree build_name_tree(std::span<const tree_tensor> tensors) {
  name_tree root;
  for (const tree_tensor& t : tensors) {
    name_tree* node = &root;
    const auto add = [&t](name_tree& n) {
      n.params += t.params;
      n.bytes += t.bytes;
      ++n.tensors;
    };
    add(root);
    std::size_t start = 0;
    for (;;) {
      const std::size_t dot = t.name.find('.', start);
      std::string part = t.name.substr(start, dot == std::string::npos ? std::string::npos : dot - start);
      name_tree& child = node->children[part];
      if (child.label.empty()) child.label = part;
      add(child);
      node = &child;
      if (dot == std::string::npos) break;
      start = dot + 1;
    }
    node->leaf = &t;
  }
  merge_chains(root);
  return root;
}

void print_name_tree(const name_tree& root, int max_depth) {
  std::vector<line> lines;
  lines.push_back({"(all)", with_commas(root.params), count_of(root.tensors, "tensor")});
  if (max_depth != 0) collect(root, 1, max_depth, lines);
  std::size_t left = 0;
  std::size_t params = 0;
  for (const line& l : lines) {
    left = std::max(left, l.left.size());
    params = std::max(params, l.params.size());
  }
  left = std::min<std::size_t>(left, 80);
  for (const line& l : lines) fmt::print("{:<{}}  {:>{}}  {}\n", l.left, left, l.params, params, l.right);
}

std::string name_tree_json(const name_tree& root) {
  std::string out;
  append_json(root, out);
  return out;
}

}  // namespace st_cli
