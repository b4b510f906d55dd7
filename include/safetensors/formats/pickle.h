// SPDX-License-Identifier: Apache-2.0
/// \file pickle.h
/// A restricted pickle reader for PyTorch checkpoints that executes nothing.
///
/// `unpickle` runs a symbolic pickle machine: opcodes build a tree of `pickle_value`s
/// instead of Python objects. Protocols 0-5 are read (the text INT/LONG/FLOAT, STRING,
/// UNICODE and PUT/GET of protocols 0-1 included). Globals are understood only against
/// an allowlist (the tensor rebuild functions, storage classes, dtypes, OrderedDict and a
/// few builtins a state_dict needs); calling them (REDUCE) builds tensor and storage descriptions, never
/// runs code. Any other global is never imported: it becomes an inert `opaque` value
/// (`text` = its dotted name), and REDUCE, NEWOBJ, NEWOBJ_EX and BUILD on it give more
/// opaque values, SETITEM(S)/APPEND(S) on it drop their items. Every such global, and
/// every call on it, is recorded in the document's `verdict()` (pickle_verdict.h).
/// Refused, with an error naming the opcode and its byte offset in the pickle stream:
///   - CodeExecution: a global on the code-execution list named anywhere in the stream
///     (checked as each global is named; the error names the first one and its byte, and
///     wins over any error met after it).
///   - UnsafeContent: INST, OBJ, calling an allowlisted non-callable (a dtype) or a
///     non-global, NEWOBJ/NEWOBJ_EX of an allowlisted class other than OrderedDict/set,
///     BUILD on anything but a tensor, dict or opaque value, SETITEM(S) on a non-dict,
///     APPEND(S) on a non-list, a persistent id that is not a ('storage', class, key,
///     location, numel) tuple, text persistent ids, extension registry opcodes.
///   - LimitExceeded: memo entries, stack depth, string length, container size, value
///     count (`pickle_limits`); nesting depth is capped by whoever walks the tree.
///   - InvalidFormat: truncated input, unknown opcodes, wrong argument shapes.
/// Values live in an arena owned by the `pickle_document`, so shared references
/// (memo) and even cycles are safe to hold; walkers must bound their depth.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/formats/pickle_verdict.h"
#include "safetensors/lifetimebound.h"

namespace safetensors::torch {

namespace detail {
class pickle_machine;  // the unpickler that fills a pickle_document
}  // namespace detail

/// Hard caps of the pickle machine. The defaults fit checkpoints with millions of tensors.
struct pickle_limits {
  std::size_t max_memo = 1 << 22;       ///< memo entries (BINPUT/MEMOIZE)
  std::size_t max_stack = 1 << 17;      ///< stack depth, marks included
  std::size_t max_string = 64 << 20;    ///< bytes of one string or bytes object
  std::size_t max_container = 1 << 24;  ///< items of one list, tuple, dict or set
  std::size_t max_values = 1 << 23;     ///< values created in total (about 100 bytes each)
  std::size_t max_nesting = 64;         ///< depth a walker may descend (pytorch.h uses it)
};

enum class pickle_kind : std::uint8_t {
  none,
  boolean,
  integer,
  big_integer,
  floating,
  string,
  bytes,
  list,
  tuple,
  dict,
  set,
  global,   ///< an allowlisted global not (yet) called: a dtype, a class
  storage,  ///< a persistent-id storage reference
  tensor,   ///< a rebuilt tensor
  opaque,   ///< an object with no meaning here: torch.device, or anything off the allowlist (never loaded)
};

/// A storage a tensor views: `data/<key>` in a zip checkpoint.
struct pickle_storage {
  std::string key;
  std::string class_name;           ///< "FloatStorage", "UntypedStorage", ...
  std::optional<dtype> type;        ///< nullopt: unrepresentable (complex128, quantized)
  std::uint64_t element_count = 0;  ///< elements of `type` (bytes when untyped)
  std::uint64_t element_bytes = 1;  ///< bytes per element of the storage class
  std::string location;             ///< "cpu", "cuda:0", ...
};

/// A tensor: a strided view of a storage. Offsets and strides count elements.
struct pickle_tensor {
  std::size_t storage = 0;          ///< index into pickle_document::storages()
  std::optional<dtype> type;        ///< nullopt when the dtype has no SafeTensors name
  std::string type_name;            ///< the torch name, for messages
  std::uint64_t element_bytes = 1;  ///< bytes per element, also when `type` is nullopt
  std::uint64_t storage_offset = 0;
  std::vector<std::uint64_t> shape;
  std::vector<std::uint64_t> strides;
};

/// Python's name for a kind of value ("int", "str", "dict", ...), for messages.
[[nodiscard]] std::string_view pickle_kind_name(pickle_kind kind) noexcept;

/// One node of the value tree. Dict items alternate key, value in insertion order.
struct pickle_value {
  pickle_kind kind = pickle_kind::none;
  std::int64_t integer = 0;  ///< integer, boolean (0/1); index into tensors()/storages()
  double floating = 0;
  std::string text;  ///< string, bytes, big_integer (hex), global/opaque name
  std::vector<const pickle_value*> items;
  bool ordered = false;  ///< dict created as collections.OrderedDict
};

/// The result of `unpickle`: the root value and the arena that owns every value.
class pickle_document {
 public:
  pickle_document();
  pickle_document(pickle_document&&) noexcept;
  pickle_document& operator=(pickle_document&&) noexcept;
  ~pickle_document();

  [[nodiscard]] const pickle_value& root() const& noexcept SAFETENSORS_LIFETIMEBOUND { return *root_; }
  const pickle_value& root() const&& = delete;
  [[nodiscard]] std::span<const pickle_tensor> tensors() const& noexcept SAFETENSORS_LIFETIMEBOUND { return tensors_; }
  std::span<const pickle_tensor> tensors() const&& = delete;
  [[nodiscard]] std::span<const pickle_storage> storages() const noexcept { return storages_; }
  /// Bytes consumed up to and including STOP (the legacy format has pickles back to back).
  [[nodiscard]] std::uint64_t end_offset() const noexcept { return end_; }
  /// Values created (a tree without shared references has this many nodes at most).
  [[nodiscard]] std::size_t value_count() const noexcept;
  /// The globals outside the allowlist the stream names (never any that runs code: such a
  /// pickle is refused).
  [[nodiscard]] const pickle_verdict& verdict() const noexcept { return verdict_; }

 private:
  friend class detail::pickle_machine;
  struct arena;
  std::unique_ptr<arena> arena_;
  const pickle_value* root_ = nullptr;
  std::vector<pickle_tensor> tensors_;
  std::vector<pickle_storage> storages_;
  std::uint64_t end_ = 0;
  pickle_verdict verdict_;
};

/// Runs the restricted machine over one pickle (up to STOP). Offsets in errors count
/// from the start of `bytes`; the message says "pickle byte N".
[[nodiscard]] result<pickle_document> unpickle(std::span<const std::byte> bytes, const pickle_limits& limits = {});

}  // namespace safetensors::torch
