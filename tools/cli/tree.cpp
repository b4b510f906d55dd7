// SPDX-License-Identifier: Apache-2.0
#include "tree.h"

#include <algorithm>
#include <map>
#include <string>
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

/// Merges chains of single-child groups ("model" + "layers" -> "model.layers"). The tree is
/// walked with a stack, not a recursion: a valid file can make it thousands of levels deep
/// (names "a.x", "a.a.x", ...: d levels for d * d header bytes) and a long name a chain of
/// a component per 2 bytes, whose label is joined once.
void merge_chains(name_tree& root) {
  std::vector<name_tree*> pending{&root};
  while (!pending.empty()) {
    name_tree* node = pending.back();
    pending.pop_back();
    for (auto& [key, child] : node->children) {
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
      pending.push_back(&child);  // map nodes stay where they are
    }
  }
}

struct line {
  std::string left;
  std::string params;
  std::string right;
};

/// A node being walked and the next of its children.
struct tree_frame {
  const name_tree* node;
  std::map<std::string, name_tree, natural_less>::const_iterator next;
  int depth;
};

void collect(const name_tree& root, int max_depth, std::vector<line>& out) {
  std::vector<tree_frame> stack{{&root, root.children.begin(), 1}};
  while (!stack.empty()) {
    tree_frame& f = stack.back();
    if (f.next == f.node->children.end()) {
      stack.pop_back();
      continue;
    }
    const name_tree& child = f.next->second;
    ++f.next;
    const int depth = f.depth;
    std::string indent(static_cast<std::size_t>(depth) * 2, ' ');
    std::string right = child.leaf != nullptr
                            ? fmt::format("{} [{}]", child.leaf->type, fmt::join(child.leaf->shape, ", "))
                            : count_of(child.tensors, "tensor");
    if (child.leaf != nullptr && !child.children.empty()) right += fmt::format(" (+{} below)", child.tensors - 1);
    out.push_back({indent + printable_text(child.label), with_commas(child.params), printable_text(right)});
    if (max_depth < 0 || depth + 1 <= max_depth) stack.push_back({&child, child.children.begin(), depth + 1});
  }
}

void open_json(const name_tree& node, std::string& out) {
  out += fmt::format(R"({{"name":{},"params":{},"bytes":{},"tensors":{})", safetensors::json_quote(node.label),
                     node.params, node.bytes, node.tensors);
  if (node.leaf != nullptr) {
    out += fmt::format(R"(,"dtype":{},"shape":[{}])", safetensors::json_quote(node.leaf->type),
                       fmt::join(node.leaf->shape, ","));
  }
  out += R"(,"children":[)";
}

void append_json(const name_tree& root, std::string& out) {
  open_json(root, out);
  std::vector<tree_frame> stack{{&root, root.children.begin(), 0}};
  while (!stack.empty()) {
    tree_frame& f = stack.back();
    if (f.next == f.node->children.end()) {
      out += "]}";
      stack.pop_back();
      continue;
    }
    if (f.next != f.node->children.begin()) out += ',';
    const name_tree& child = f.next->second;
    ++f.next;
    open_json(child, out);
    stack.push_back({&child, child.children.begin(), 0});
  }
}

}  // namespace

name_tree::~name_tree() {
  // Children's children are moved out before a child is destroyed, so no destructor recurses.
  std::vector<std::map<std::string, name_tree, natural_less>> pending;
  pending.push_back(std::move(children));
  while (!pending.empty()) {
    std::map<std::string, name_tree, natural_less> level = std::move(pending.back());
    pending.pop_back();
    for (auto& [key, child] : level) pending.push_back(std::move(child.children));
  }
}

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
  if (max_depth != 0) collect(root, max_depth, lines);
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
