// SPDX-License-Identifier: Apache-2.0
// Internal: the globals a checkpoint pickle may name, and what each one is. Anything
// not listed here is refused by the pickle machine before it is ever called.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

#include "safetensors/dtype.h"

namespace safetensors::torch::detail {

enum class global_role : unsigned char {
  ordered_dict,          ///< collections.OrderedDict()
  rebuild_tensor,        ///< torch._utils._rebuild_tensor(storage, offset, size, stride)
  rebuild_tensor_v2,     ///< ... requires_grad, hooks[, metadata]
  rebuild_tensor_v3,     ///< ... requires_grad, hooks, dtype[, metadata]
  rebuild_parameter,     ///< (data, requires_grad, hooks[, state]) -> data
  rebuild_from_type_v2,  ///< (func, new_type, args, state) -> func(*args)
  codecs_encode,         ///< _codecs.encode(str, 'latin1') -> bytes
  make_set,              ///< builtins.set / frozenset
  make_bytearray,        ///< builtins.bytearray
  torch_size,            ///< torch.Size(tuple) -> tuple
  torch_device,          ///< torch.device(...) -> opaque
  tensor_class,          ///< torch.Tensor, torch.nn.parameter.Parameter (new_type only)
  storage_class,         ///< torch.FloatStorage, ...: only inside a persistent id
  dtype_value,           ///< torch.float32, ...: only as an argument
};

struct allowed_global {
  std::string_view module;
  std::string_view name;
  global_role role;
  std::optional<dtype> type;      ///< storage_class and dtype_value: the element type
  std::size_t element_bytes = 0;  ///< storage_class and dtype_value
};

/// The entry for module.name (Python 2 names mapped), or nullptr when not allowed.
[[nodiscard]] const allowed_global* find_allowed_global(std::string_view module, std::string_view name) noexcept;
/// The entry with this index in the table (indices are stored in pickle_value::integer).
[[nodiscard]] const allowed_global& allowed_global_at(std::size_t index) noexcept;
[[nodiscard]] std::size_t allowed_global_index(const allowed_global& entry) noexcept;

/// Globals of tensors torch writes and torch.load(weights_only=True) accepts but SafeTensors
/// cannot hold (quantized, sparse, nested, meta: their rebuild functions, qschemes and
/// layouts). Never called here: the tensor is skipped, or refused as Unsupported by strict,
/// rather than refused as an object outside the allowlist.
[[nodiscard]] bool unconvertible_tensor_global(std::string_view dotted) noexcept;

}  // namespace safetensors::torch::detail
