// SPDX-License-Identifier: Apache-2.0
#include "formats/pytorch/pickle_allowlist.h"

#include <array>
#include <iterator>
#include <string_view>

namespace safetensors::torch::detail {
namespace {

using r = global_role;
using d = dtype;

// Storage classes and dtypes follow torch/_utils.py and torch/storage.py; entries without
// a dtype are well-formed torch types SafeTensors cannot hold (complex128, quantized).
constexpr std::array table{
    allowed_global{"collections", "OrderedDict", r::ordered_dict, {}, 0},
    allowed_global{"torch._utils", "_rebuild_tensor", r::rebuild_tensor, {}, 0},
    allowed_global{"torch._utils", "_rebuild_tensor_v2", r::rebuild_tensor_v2, {}, 0},
    allowed_global{"torch._utils", "_rebuild_tensor_v3", r::rebuild_tensor_v3, {}, 0},
    allowed_global{"torch._utils", "_rebuild_parameter", r::rebuild_parameter, {}, 0},
    allowed_global{"torch._utils", "_rebuild_parameter_with_state", r::rebuild_parameter, {}, 0},
    allowed_global{"torch._tensor", "_rebuild_from_type_v2", r::rebuild_from_type_v2, {}, 0},
    allowed_global{"_codecs", "encode", r::codecs_encode, {}, 0},
    allowed_global{"builtins", "set", r::make_set, {}, 0},
    allowed_global{"builtins", "frozenset", r::make_set, {}, 0},
    allowed_global{"builtins", "bytearray", r::make_bytearray, {}, 0},
    allowed_global{"torch", "Size", r::torch_size, {}, 0},
    allowed_global{"torch", "device", r::torch_device, {}, 0},
    allowed_global{"torch", "Tensor", r::tensor_class, {}, 0},
    allowed_global{"torch.nn.parameter", "Parameter", r::tensor_class, {}, 0},
    allowed_global{"torch", "FloatStorage", r::storage_class, d::F32, 4},
    allowed_global{"torch", "DoubleStorage", r::storage_class, d::F64, 8},
    allowed_global{"torch", "HalfStorage", r::storage_class, d::F16, 2},
    allowed_global{"torch", "BFloat16Storage", r::storage_class, d::BF16, 2},
    allowed_global{"torch", "LongStorage", r::storage_class, d::I64, 8},
    allowed_global{"torch", "IntStorage", r::storage_class, d::I32, 4},
    allowed_global{"torch", "ShortStorage", r::storage_class, d::I16, 2},
    allowed_global{"torch", "CharStorage", r::storage_class, d::I8, 1},
    allowed_global{"torch", "ByteStorage", r::storage_class, d::U8, 1},
    allowed_global{"torch", "BoolStorage", r::storage_class, d::BOOL, 1},
    allowed_global{"torch", "ComplexFloatStorage", r::storage_class, d::C64, 8},
    allowed_global{"torch", "ComplexDoubleStorage", r::storage_class, {}, 16},
    allowed_global{"torch", "QInt8Storage", r::storage_class, {}, 1},
    allowed_global{"torch", "QUInt8Storage", r::storage_class, {}, 1},
    allowed_global{"torch", "QInt32Storage", r::storage_class, {}, 4},
    allowed_global{"torch", "QUInt4x2Storage", r::storage_class, {}, 1},
    allowed_global{"torch", "QUInt2x4Storage", r::storage_class, {}, 1},
    allowed_global{"torch", "UntypedStorage", r::storage_class, d::U8, 1},
    allowed_global{"torch", "float32", r::dtype_value, d::F32, 4},
    allowed_global{"torch", "float", r::dtype_value, d::F32, 4},
    allowed_global{"torch", "float64", r::dtype_value, d::F64, 8},
    allowed_global{"torch", "double", r::dtype_value, d::F64, 8},
    allowed_global{"torch", "float16", r::dtype_value, d::F16, 2},
    allowed_global{"torch", "half", r::dtype_value, d::F16, 2},
    allowed_global{"torch", "bfloat16", r::dtype_value, d::BF16, 2},
    allowed_global{"torch", "int64", r::dtype_value, d::I64, 8},
    allowed_global{"torch", "long", r::dtype_value, d::I64, 8},
    allowed_global{"torch", "int32", r::dtype_value, d::I32, 4},
    allowed_global{"torch", "int", r::dtype_value, d::I32, 4},
    allowed_global{"torch", "int16", r::dtype_value, d::I16, 2},
    allowed_global{"torch", "short", r::dtype_value, d::I16, 2},
    allowed_global{"torch", "int8", r::dtype_value, d::I8, 1},
    allowed_global{"torch", "uint8", r::dtype_value, d::U8, 1},
    allowed_global{"torch", "uint16", r::dtype_value, d::U16, 2},
    allowed_global{"torch", "uint32", r::dtype_value, d::U32, 4},
    allowed_global{"torch", "uint64", r::dtype_value, d::U64, 8},
    allowed_global{"torch", "bool", r::dtype_value, d::BOOL, 1},
    allowed_global{"torch", "complex64", r::dtype_value, d::C64, 8},
    allowed_global{"torch", "cfloat", r::dtype_value, d::C64, 8},
    allowed_global{"torch", "complex128", r::dtype_value, {}, 16},
    allowed_global{"torch", "complex32", r::dtype_value, {}, 4},
    allowed_global{"torch", "float8_e4m3fn", r::dtype_value, d::F8_E4M3, 1},
    allowed_global{"torch", "float8_e5m2", r::dtype_value, d::F8_E5M2, 1},
    allowed_global{"torch", "float8_e4m3fnuz", r::dtype_value, d::F8_E4M3FNUZ, 1},
    allowed_global{"torch", "float8_e5m2fnuz", r::dtype_value, d::F8_E5M2FNUZ, 1},
    allowed_global{"torch", "float8_e8m0fnu", r::dtype_value, d::F8_E8M0, 1},
    allowed_global{"torch", "float4_e2m1fn_x2", r::dtype_value, {}, 1},
    allowed_global{"torch", "qint8", r::dtype_value, {}, 1},
    allowed_global{"torch", "quint8", r::dtype_value, {}, 1},
    allowed_global{"torch", "qint32", r::dtype_value, {}, 4},
};

}  // namespace

const allowed_global* find_allowed_global(std::string_view module, std::string_view name) noexcept {
  if (module == "__builtin__") module = "builtins";  // Python 2 pickles
  for (const auto& entry : table) {
    if (entry.module == module && entry.name == name) return &entry;
  }
  return nullptr;
}

const allowed_global& allowed_global_at(std::size_t index) noexcept { return table[index]; }

std::size_t allowed_global_index(const allowed_global& entry) noexcept {
  return static_cast<std::size_t>(&entry - table.data());
}

bool unconvertible_tensor_global(std::string_view dotted) noexcept {
  static constexpr std::string_view names[] = {
      "torch._utils._rebuild_qtensor",
      "torch._utils._rebuild_sparse_tensor",
      "torch._utils._rebuild_sparse_csr_tensor",
      "torch._utils._rebuild_nested_tensor",
      "torch._utils._rebuild_meta_tensor_no_storage",
      "torch._utils._rebuild_wrapper_subclass",
      "torch._utils._rebuild_device_tensor_from_numpy",
      "torch.serialization._get_layout",
      "torch.per_tensor_affine",
      "torch.per_channel_affine",
      "torch.per_tensor_symmetric",
      "torch.per_channel_symmetric",
      "torch.per_channel_affine_float_qparams",
      "torch.sparse_coo",
      "torch.sparse_csr",
      "torch.sparse_csc",
      "torch.sparse_bsr",
      "torch.sparse_bsc",
      "torch.strided",
      "torch._mkldnn",
  };
  for (std::string_view name : names) {
    if (dotted == name) return true;
  }
  return false;
}

}  // namespace safetensors::torch::detail
