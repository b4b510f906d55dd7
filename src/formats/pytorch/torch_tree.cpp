// SPDX-License-Identifier: Apache-2.0
#include "formats/pytorch/torch_tree.h"

#include <set>
#include <string_view>

namespace safetensors::detail {
namespace {

// A walk over the value tree. Memo references can make it a DAG or even a cycle, so the
// walk is bounded in depth and in visits: a few per value, which a dict shared by a couple
// of keys stays within and a memo bomb (2^40 paths through 40 values) does not.
class flattener {
 public:
  flattener(const pickle_document& doc, std::size_t max_nesting)
      : doc_(doc), max_nesting_(max_nesting), budget_(4 * doc.value_count() + 4096) {}

  status walk(const pickle_value& v, const std::string& name, std::size_t depth) {
    if (budget_-- == 0) {
      return make_error(error_code::limit_exceeded, "the checkpoint's object tree is too large (shared references?)");
    }
    if (depth > max_nesting_) {
      return make_error(error_code::limit_exceeded,
                        "dicts nested deeper than " + std::to_string(max_nesting_) + " levels", std::nullopt, name);
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
      default: tree_.skipped.push_back({name, "not a tensor: " + describe(v)}); return {};
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

  status add_tensor(const pickle_tensor& t, const std::string& name) {
    if (!names_.insert(name).second) {
      return make_error(error_code::invalid_format, "two values flatten to the same name", std::nullopt, name);
    }
    if (!t.type) {
      return make_error(error_code::unsupported, "dtype " + t.type_name + " has no SafeTensors equivalent",
                        std::nullopt, name);
    }
    const pickle_storage& storage = doc_.storages()[t.storage];
    if (auto ok = check_bounds(t, storage, name); !ok) return ok;
    torch_tensor out;
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
      return bad("view (offset " + std::to_string(t.storage_offset) + ", last element " + std::to_string(last) +
                 ") reaches past its storage '" + storage.key + "' of " + std::to_string(storage_bytes) + " bytes");
    }
    return {};
  }

  const pickle_document& doc_;
  std::size_t max_nesting_;
  std::size_t budget_;
  std::set<std::string> names_;
  torch_tree tree_;
};

// The value at `key`: first an exact top-level key, then a dotted path.
result<const pickle_value*> select_key(const pickle_value& root, const std::string& key) {
  auto find = [](const pickle_value& dict, std::string_view k) -> const pickle_value* {
    if (dict.kind != pickle_kind::dict) return nullptr;
    for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
      if (dict.items[i]->kind == pickle_kind::string && dict.items[i]->text == k) return dict.items[i + 1];
    }
    return nullptr;
  };
  if (const auto* v = find(root, key)) return v;
  const pickle_value* v = &root;
  std::string_view rest = key;
  for (std::size_t steps = 0; v != nullptr && !rest.empty() && steps < 64; ++steps) {
    auto dot = rest.find('.');
    v = find(*v, rest.substr(0, dot));
    rest = dot == std::string_view::npos ? std::string_view{} : rest.substr(dot + 1);
  }
  if (v != nullptr && rest.empty()) return v;
  std::string keys;
  if (root.kind == pickle_kind::dict) {
    for (std::size_t i = 0; i + 1 < root.items.size() && i < 40; i += 2) {
      if (root.items[i]->kind == pickle_kind::string) keys += (keys.empty() ? "" : ", ") + root.items[i]->text;
    }
  }
  return make_error(error_code::invalid_argument, "no entry '" + key + "' in the checkpoint" +
                                                      (keys.empty() ? "" : " (top-level keys: " + keys + ")"));
}

}  // namespace

result<torch_tree> flatten_checkpoint(const pickle_document& doc, const std::string& key, std::size_t max_nesting) {
  const pickle_value* root = &doc.root();
  if (!key.empty()) {
    auto selected = select_key(*root, key);
    if (!selected) return std::move(selected).err();
    root = *selected;
  }
  if (root->kind != pickle_kind::dict) {
    return make_error(error_code::invalid_format, std::string("the checkpoint holds no dict of tensors") +
                                                      (key.empty() ? "" : " at '" + key + "'"));
  }
  flattener f(doc, max_nesting);
  if (auto ok = f.walk(*root, "", 0); !ok) return std::move(ok).err();
  return std::move(f).take();
}

}  // namespace safetensors::detail
