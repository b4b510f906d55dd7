// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "formats/pytorch/torch_tree.h"

#include <optional>
#include <set>
#include <string_view>
#include <utility>

namespace safetensors::torch::detail {
namespace {

// A walk over the value tree. Memo references can make it a DAG or even a cycle, so the
// walk is bounded in depth and in visits: a few per value, which a dict shared by a couple
// of keys stays within and a memo bomb (2^40 paths through 40 values) does not.
class flattener {
 public:
  flattener(const pickle_document& doc, std::size_t max_nesting, bool strict)
      : doc_(doc), max_nesting_(max_nesting), strict_(strict), budget_(4 * doc.value_count() + 4096) {}

  status walk(const pickle_value& v, const std::string& name, std::size_t depth) {
    if (budget_-- == 0) {
      return make_error(error_code::limit_exceeded, "the checkpoint's object tree is too large (shared references?)");
    }
    if (depth > max_nesting_) {
      return make_error(error_code::limit_exceeded, fmt::format("dicts nested deeper than {} levels", max_nesting_),
                        std::nullopt, name);
    }
    switch (v.kind) {
      case pickle_kind::dict:
        for (std::size_t i = 0; i + 1 < v.items.size(); i += 2) {
          auto key = key_text(*v.items[i]);
          if (!key) {
            tree_.skipped.push_back({join(name, "<non-string key>"), "dict key is not a string or int"});
            continue;
          }
          if (auto ok = walk(*v.items[i + 1], join(name, *key), depth + 1); !ok) return ok;
        }
        return {};
      case pickle_kind::tensor: return add_tensor(doc_.tensors()[static_cast<std::size_t>(v.integer)], name);
      default: {
        if (const pickle_value* inert = find_opaque(v, depth)) return skip_opaque(*inert, &v != inert, name);
        tree_.skipped.push_back({name, "not a tensor: " + describe(v), skip_kind::not_tensor});
        return {};
      }
    }
  }

  torch_tree take() && { return std::move(tree_); }

 private:
  static std::string join(const std::string& prefix, std::string_view key) {
    return prefix.empty() ? std::string(key) : prefix + "." + std::string(key);
  }

  static std::optional<std::string> key_text(const pickle_value& key) {
    if (key.kind == pickle_kind::string) return key.text;
    if (key.kind == pickle_kind::integer) return std::to_string(key.integer);
    return std::nullopt;
  }

  static std::string describe(const pickle_value& v) {
    if (v.kind == pickle_kind::global || v.kind == pickle_kind::opaque) return v.text;
    return std::string(pickle_kind_name(v.kind));
  }

  // The first value outside the allowlist in `v` (lists, tuples and sets are searched,
  // within the nesting limit and the walk's budget), or nullptr. torch.device is an
  // allowlisted opaque value and does not count.
  const pickle_value* find_opaque(const pickle_value& v, std::size_t depth) {
    if (v.kind == pickle_kind::opaque) return v.text == "torch.device" ? nullptr : &v;
    if (depth > max_nesting_ || budget_ == 0) return nullptr;
    if (v.kind != pickle_kind::list && v.kind != pickle_kind::tuple && v.kind != pickle_kind::set &&
        v.kind != pickle_kind::dict) {
      return nullptr;
    }
    for (const pickle_value* item : v.items) {
      --budget_;
      if (const pickle_value* found = find_opaque(*item, depth + 1)) return found;
      if (budget_ == 0) break;
    }
    return nullptr;
  }

  // What a known torch rebuild function outside the allowlist would have built.
  static std::optional<std::string> unsupported_tensor_kind(const std::string& global) {
    static constexpr std::pair<std::string_view, std::string_view> known[] = {
        {"torch._utils._rebuild_qtensor", "a quantized tensor"},
        {"torch._utils._rebuild_sparse_tensor", "a sparse tensor"},
        {"torch._utils._rebuild_sparse_csr_tensor", "a sparse tensor"},
        {"torch._utils._rebuild_nested_tensor", "a nested tensor"},
        {"torch._utils._rebuild_meta_tensor_no_storage", "a meta tensor (no data)"},
        {"torch._utils._rebuild_wrapper_subclass", "a tensor subclass"},
        {"torch._utils._rebuild_device_tensor_from_numpy", "a device tensor"},
    };
    for (const auto& [name, what] : known) {
      if (global == name) return std::string(what);
    }
    return std::nullopt;
  }

  status skip_opaque(const pickle_value& inert, bool nested, const std::string& name) {
    if (auto tensor = unsupported_tensor_kind(inert.text)) {
      return skip_or_refuse(
          {name, *tensor + " (" + inert.text + "), which SafeTensors cannot hold", skip_kind::unsupported_tensor});
    }
    return skip_or_refuse({name,
                           std::string(nested ? "contains" : "is") + " an object outside the allowlist (" + inert.text +
                               "), never loaded",
                           skip_kind::opaque_object});
  }

  status skip_or_refuse(skipped_value skipped) {
    if (strict_) {
      const error_code code =
          skipped.kind == skip_kind::opaque_object ? error_code::unsafe_content : error_code::unsupported;
      return make_error(code, skipped.reason + " (without --strict it would be skipped)", std::nullopt, skipped.name);
    }
    tree_.skipped.push_back(std::move(skipped));
    return {};
  }

  status add_tensor(const pickle_tensor& t, const std::string& name) {
    if (!names_.insert(name).second) {
      return make_error(error_code::invalid_format, "two values flatten to the same name", std::nullopt, name);
    }
    if (!t.type) {
      return skip_or_refuse(
          {name, "a " + t.type_name + " tensor, a dtype SafeTensors cannot hold", skip_kind::unsupported_tensor});
    }
    const pickle_storage& storage = doc_.storages()[t.storage];
    if (auto ok = check_bounds(t, storage, name); !ok) return ok;
    tensor out;
    out.name = name;
    out.type = *t.type;
    out.shape = t.shape;
    out.strides = t.strides;
    out.storage_offset = t.storage_offset;
    out.storage = t.storage;
    tree_.tensors.push_back(std::move(out));
    return {};
  }

  // For a non-empty tensor, offset + sum((size_i - 1) * stride_i) must be an element of
  // the storage; all in elements of the tensor's dtype, overflow-checked.
  static status check_bounds(const pickle_tensor& t, const pickle_storage& storage, const std::string& name) {
    auto bad = [&](const std::string& why) { return make_error(error_code::invalid_format, why, std::nullopt, name); };
    std::uint64_t storage_bytes = 0;
    if (__builtin_mul_overflow(storage.element_count, storage.element_bytes, &storage_bytes)) {
      return bad("storage size overflows");
    }
    auto count = element_count(t.shape);
    if (!count) return bad("shape overflows");
    if (*count == 0) return {};
    std::uint64_t last = t.storage_offset;
    for (std::size_t i = 0; i < t.shape.size(); ++i) {
      std::uint64_t step = 0;
      if (__builtin_mul_overflow(t.shape[i] - 1, t.strides[i], &step) || __builtin_add_overflow(last, step, &last)) {
        return bad("view extent overflows");
      }
    }
    std::uint64_t end_bytes = 0;
    if (__builtin_add_overflow(last, 1, &end_bytes) || __builtin_mul_overflow(end_bytes, t.element_bytes, &end_bytes) ||
        end_bytes > storage_bytes) {
      return bad(fmt::format("view (offset {}, last element {}) reaches past its storage '{}' of {} bytes",
                             t.storage_offset, last, storage.key, storage_bytes));
    }
    return {};
  }

  const pickle_document& doc_;
  std::size_t max_nesting_;
  bool strict_;
  std::size_t budget_;
  std::set<std::string> names_;
  torch_tree tree_;
};

// A value in a --key message: "a tensor (F32 [2, 3])", "an int", "an object (argparse.Namespace)".
std::string what_is(const pickle_document& doc, const pickle_value& v) {
  switch (v.kind) {
    case pickle_kind::tensor: {
      const pickle_tensor& t = doc.tensors()[static_cast<std::size_t>(v.integer)];
      std::string shape;
      for (auto d : t.shape) shape += (shape.empty() ? "" : ", ") + std::to_string(d);
      return "a tensor (" + (t.type ? std::string(dtype_name(*t.type)) : t.type_name) + " [" + shape + "])";
    }
    case pickle_kind::opaque: return "an object (" + v.text + ")";
    case pickle_kind::integer:
    case pickle_kind::big_integer: return "an int";
    case pickle_kind::none: return "None";
    default: return "a " + std::string(pickle_kind_name(v.kind));
  }
}

const pickle_value* dict_entry(const pickle_value& dict, std::string_view k) {
  if (dict.kind != pickle_kind::dict) return nullptr;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    const pickle_value& key = *dict.items[i];
    if ((key.kind == pickle_kind::string && key.text == k) ||
        (key.kind == pickle_kind::integer && std::to_string(key.integer) == k)) {
      return dict.items[i + 1];
    }
  }
  return nullptr;
}

std::string listed_keys(const pickle_value& dict) {
  std::string keys;
  for (std::size_t i = 0; i + 1 < dict.items.size() && i < 40; i += 2) {
    if (dict.items[i]->kind == pickle_kind::string) keys += (keys.empty() ? "" : ", ") + dict.items[i]->text;
  }
  return keys;
}

// The dict at `key`: first an exact top-level key, then a dotted path. Every refusal is
// InvalidArgument (a bad --key), saying what the path reaches when it is not a dict.
result<const pickle_value*> select_key(const pickle_document& doc, const std::string& key) {
  const pickle_value& root = doc.root();
  const pickle_value* v = dict_entry(root, key);
  std::string reached = key;
  if (v == nullptr) {
    v = &root;
    std::string_view rest = key;
    reached.clear();
    for (std::size_t steps = 0; !rest.empty() && steps < 64; ++steps) {
      const auto dot = rest.find('.');
      const std::string_view part = rest.substr(0, dot);
      if (v->kind != pickle_kind::dict) {
        return make_error(error_code::invalid_argument, "--key '" + key + "': '" + reached + "' is " +
                                                            what_is(doc, *v) + ", not a dict with an entry '" +
                                                            std::string(part) + "'");
      }
      const pickle_value* next = dict_entry(*v, part);
      if (next == nullptr) {
        const std::string keys = listed_keys(*v);
        return make_error(
            error_code::invalid_argument,
            "no entry '" + key + "' in the checkpoint" +
                (reached.empty() ? "" : " ('" + reached + "' has no '" + std::string(part) + "')") +
                (keys.empty() ? ""
                              : " (" + std::string(reached.empty() ? "top-level" : "its") + " keys: " + keys + ")"));
      }
      if (!reached.empty()) reached += '.';
      reached.append(part);
      v = next;
      rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
    }
  }
  if (v->kind != pickle_kind::dict) {
    return make_error(error_code::invalid_argument,
                      "--key '" + key + "' names " + what_is(doc, *v) + ", not a dict of tensors");
  }
  return v;
}

std::string skipped_list(const std::vector<skipped_value>& skipped) {
  std::string names;
  for (std::size_t i = 0; i < skipped.size() && i < 10; ++i) names += (i ? ", " : "") + skipped[i].name;
  if (skipped.size() > 10) names += ", ...";
  return names.empty() ? "" : " (skipped: " + names + ")";
}

}  // namespace

result<torch_tree> flatten_checkpoint(const pickle_document& doc, const std::string& key, std::size_t max_nesting,
                                      bool strict) {
  const pickle_value* root = &doc.root();
  if (!key.empty()) {
    auto selected = select_key(doc, key);
    if (!selected) return std::move(selected).err();
    root = *selected;
  }
  if (root->kind != pickle_kind::dict) {
    return make_error(error_code::invalid_format,
                      "the checkpoint holds " + what_is(doc, *root) + ", not a dict of tensors");
  }
  flattener f(doc, max_nesting, strict);
  if (auto ok = f.walk(*root, "", 0); !ok) return std::move(ok).err();
  torch_tree tree = std::move(f).take();
  if (tree.tensors.empty()) {
    // Writing an empty file would look like success.
    if (!key.empty()) {
      return make_error(error_code::invalid_argument,
                        "--key '" + key + "' names a dict that holds no tensor" + skipped_list(tree.skipped));
    }
    return make_error(error_code::invalid_format, "the checkpoint holds no tensor" + skipped_list(tree.skipped));
  }
  return tree;
}

}  // namespace safetensors::torch::detail
