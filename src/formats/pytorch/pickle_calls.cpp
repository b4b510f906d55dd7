// SPDX-License-Identifier: Apache-2.0
// REDUCE, NEWOBJ and BUILD of the restricted pickle machine. Only allowlisted globals
// are understood, and each call builds a description (a tensor, a dict, bytes) instead
// of running anything; calling or building an opaque value (a global outside the
// allowlist, never imported) gives another opaque value.
#include <string>

#include <fmt/format.h>

#include "formats/pytorch/pickle_allowlist.h"
#include "formats/pytorch/pickle_machine.h"

namespace safetensors::torch {
namespace {

using detail::global_role;

const detail::allowed_global* global_of(const pickle_value& v) {
  if (v.kind != pickle_kind::global) return nullptr;
  return &detail::allowed_global_at(static_cast<std::size_t>(v.integer));
}

// Values are owned by the arena and stay mutable for the whole run; the tree hands out
// const pointers so that readers of the finished document cannot change it.
pickle_value* mutable_value(const pickle_value* v) { return const_cast<pickle_value*>(v); }

bool is_count(const pickle_value* v) { return v->kind == pickle_kind::integer && v->integer >= 0; }

std::string kind_name(pickle_kind kind) { return std::string(pickle_kind_name(kind)); }

// Python's latin-1 encoding of a UTF-8 string: every code point must be below 256.
bool latin1_from_utf8(const std::string& text, std::string& out) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    auto c = static_cast<unsigned char>(text[i]);
    if (c < 0x80) {
      out += static_cast<char>(c);
    } else if ((c == 0xc2 || c == 0xc3) && i + 1 < text.size()) {
      out += static_cast<char>(((c & 0x03) << 6) | (static_cast<unsigned char>(text[++i]) & 0x3f));
    } else {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string_view pickle_kind_name(pickle_kind kind) noexcept {
  switch (kind) {
    case pickle_kind::none: return "None";
    case pickle_kind::boolean: return "bool";
    case pickle_kind::integer:
    case pickle_kind::big_integer: return "int";
    case pickle_kind::floating: return "float";
    case pickle_kind::string: return "str";
    case pickle_kind::bytes: return "bytes";
    case pickle_kind::list: return "list";
    case pickle_kind::tuple: return "tuple";
    case pickle_kind::dict: return "dict";
    case pickle_kind::set: return "set";
    case pickle_kind::global: return "global";
    case pickle_kind::storage: return "storage";
    case pickle_kind::tensor: return "tensor";
    case pickle_kind::opaque: return "object";
  }
  return "value";
}

namespace detail {

result<pickle_value*> pickle_machine::rebuild_tensor(int version, std::span<const pickle_value* const> args) {
  const std::size_t min_args = version == 1 ? 4 : version == 2 ? 6 : 7;
  if (args.size() < min_args || args.size() > min_args + 1) {
    return fail(error_code::invalid_format,
                fmt::format("tensor rebuild takes {} arguments, got {}", min_args, args.size()));
  }
  if (args[0]->kind != pickle_kind::storage)
    return fail(error_code::invalid_format, "tensor rebuild without a storage");
  if (!is_count(args[1])) return fail(error_code::invalid_format, "storage offset is not a non-negative int");
  const pickle_value& size = *args[2];
  const pickle_value& stride = *args[3];
  if (size.kind != pickle_kind::tuple || stride.kind != pickle_kind::tuple ||
      size.items.size() != stride.items.size()) {
    return fail(error_code::invalid_format, "size and stride must be tuples of the same length");
  }
  pickle_tensor t;
  t.storage = static_cast<std::size_t>(args[0]->integer);
  t.storage_offset = static_cast<std::uint64_t>(args[1]->integer);
  for (std::size_t i = 0; i < size.items.size(); ++i) {
    if (!is_count(size.items[i]) || !is_count(stride.items[i])) {
      return fail(error_code::invalid_format, "sizes and strides must be non-negative ints");
    }
    t.shape.push_back(static_cast<std::uint64_t>(size.items[i]->integer));
    t.strides.push_back(static_cast<std::uint64_t>(stride.items[i]->integer));
  }
  const pickle_storage& storage = doc_.storages_[t.storage];
  t.type = storage.type;
  t.type_name = storage.class_name;
  t.element_bytes = storage.element_bytes;
  if (version == 3) {
    const auto* dtype_global = global_of(*args[6]);
    if (dtype_global == nullptr || dtype_global->role != global_role::dtype_value) {
      return fail(error_code::invalid_format, "the seventh argument of _rebuild_tensor_v3 is not a torch dtype");
    }
    t.type = dtype_global->type;
    t.type_name = "torch." + std::string(dtype_global->name);
    t.element_bytes = dtype_global->element_bytes;
  }
  pickle_value* v = make(pickle_kind::tensor);
  v->integer = static_cast<std::int64_t>(doc_.tensors_.size());
  doc_.tensors_.push_back(std::move(t));
  return v;
}

pickle_value* pickle_machine::opaque_result(const pickle_value& origin) {
  pickle_value* v = make(pickle_kind::opaque);
  v->text = origin.text;
  return v;
}

result<pickle_value*> pickle_machine::call(const pickle_value& callable, const pickle_value& args) {
  // Calling an object outside the allowlist runs nothing: the result is as inert as it.
  if (callable.kind == pickle_kind::opaque) {
    note_call(callable);
    return opaque_result(callable);
  }
  const auto* g = global_of(callable);
  if (g == nullptr) return fail(error_code::unsafe_content, "cannot call a " + kind_name(callable.kind));
  if (args.kind != pickle_kind::tuple) return fail(error_code::invalid_format, "arguments are not a tuple");
  const auto& a = args.items;
  switch (g->role) {
    case global_role::ordered_dict: {
      if (!a.empty()) return fail(error_code::unsupported, "OrderedDict with arguments");
      pickle_value* d = make(pickle_kind::dict);
      d->ordered = true;
      return d;
    }
    case global_role::rebuild_tensor: return rebuild_tensor(1, a);
    case global_role::rebuild_tensor_v2: return rebuild_tensor(2, a);
    case global_role::rebuild_tensor_v3: return rebuild_tensor(3, a);
    case global_role::rebuild_parameter:
      if (a.size() < 3 || a.size() > 4 || a[0]->kind != pickle_kind::tensor) {
        return fail(error_code::invalid_format, "_rebuild_parameter needs (tensor, requires_grad, hooks[, state])");
      }
      return mutable_value(a[0]);
    case global_role::rebuild_from_type_v2: {
      // (func, new_type, args, state): the tensor is func(*args); type and state are dropped,
      // so a Tensor subclass outside the allowlist (an opaque new_type) is harmless.
      if (a.size() == 4 && a[0]->kind == pickle_kind::opaque) {
        note_call(*a[0]);  // torch would call it
        return opaque_result(*a[0]);
      }
      const auto* func = a.size() == 4 ? global_of(*a[0]) : nullptr;
      const auto* type = a.size() == 4 ? global_of(*a[1]) : nullptr;
      const bool known_type = type != nullptr && type->role == global_role::tensor_class;
      if (func == nullptr || (!known_type && (a.size() != 4 || a[1]->kind != pickle_kind::opaque)) ||
          (func->role != global_role::rebuild_tensor && func->role != global_role::rebuild_tensor_v2 &&
           func->role != global_role::rebuild_tensor_v3 && func->role != global_role::rebuild_parameter)) {
        return fail(error_code::unsafe_content,
                    "_rebuild_from_type_v2 accepts only tensor rebuild functions and types");
      }
      return call(*a[0], *a[2]);
    }
    case global_role::codecs_encode: {
      pickle_value* b = make(pickle_kind::bytes);
      if (a.size() != 2 || a[0]->kind != pickle_kind::string || a[1]->kind != pickle_kind::string ||
          (a[1]->text != "latin1" && a[1]->text != "latin-1") || !latin1_from_utf8(a[0]->text, b->text)) {
        return fail(error_code::invalid_format, "_codecs.encode takes a latin-1 string and 'latin1'");
      }
      return b;
    }
    case global_role::make_set: {
      pickle_value* s = make(pickle_kind::set);
      if (a.size() == 1 &&
          (a[0]->kind == pickle_kind::list || a[0]->kind == pickle_kind::tuple || a[0]->kind == pickle_kind::set)) {
        s->items = a[0]->items;
      } else if (!a.empty()) {
        return fail(error_code::invalid_format, "set() takes a list");
      }
      return s;
    }
    case global_role::make_bytearray: {
      pickle_value* b = make(pickle_kind::bytes);
      if (a.size() == 1 && a[0]->kind == pickle_kind::bytes) {
        b->text = a[0]->text;
      } else if (!a.empty()) {
        return fail(error_code::invalid_format, "bytearray() takes bytes");
      }
      return b;
    }
    case global_role::torch_size: {
      if (a.size() != 1 || a[0]->kind != pickle_kind::tuple)
        return fail(error_code::invalid_format, "torch.Size takes a tuple");
      return mutable_value(a[0]);
    }
    case global_role::torch_device: {
      pickle_value* d = make(pickle_kind::opaque);
      d->text = "torch.device";
      return d;
    }
    case global_role::tensor_class:
    case global_role::storage_class:
    case global_role::dtype_value: break;
  }
  return fail(error_code::unsafe_content, "'" + callable.text + "' cannot be called");
}

result<pickle_value*> pickle_machine::instantiate(const pickle_value& cls, const pickle_value& args) {
  if (cls.kind == pickle_kind::opaque) {
    note_call(cls);
    return opaque_result(cls);
  }
  const auto* g = global_of(cls);
  if (g != nullptr && (g->role == global_role::ordered_dict || g->role == global_role::make_set) &&
      args.kind == pickle_kind::tuple && args.items.empty()) {
    pickle_value* v = make(g->role == global_role::ordered_dict ? pickle_kind::dict : pickle_kind::set);
    v->ordered = g->role == global_role::ordered_dict;
    return v;
  }
  return fail(error_code::unsafe_content,
              "cannot instantiate " + (g != nullptr ? "'" + cls.text + "'" : "a " + kind_name(cls.kind)));
}

status pickle_machine::build(const pickle_value& target, const pickle_value& /*state*/) {
  // A tensor's state (requires_grad, hooks, subclass attributes) and an OrderedDict's
  // _metadata carry nothing SafeTensors stores.
  if (target.kind == pickle_kind::opaque) note_call(target);  // __setstate__ or a __dict__ update
  if (target.kind == pickle_kind::tensor || target.kind == pickle_kind::dict || target.kind == pickle_kind::opaque) {
    return {};
  }
  return fail(error_code::unsafe_content, "cannot set the state of a " + kind_name(target.kind));
}

}  // namespace detail

}  // namespace safetensors::torch
