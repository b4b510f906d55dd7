// SPDX-License-Identifier: Apache-2.0
// Python buffers as byte spans, and conversions shared by the binding files.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include <pybind11/pybind11.h>

#include "safetensors/dtype.h"
#include "safetensors/header.h"
#include "safetensors/slice.h"

namespace st_python {

/// Tensors bigger than this are read and written in pieces of it, with a check for Ctrl-C
/// (the GIL taken back briefly) between them.
inline constexpr std::size_t interrupt_chunk = std::size_t{64} << 20;

/// A C-contiguous view of a Python buffer (numpy array, bytes, bytearray, memoryview),
/// held until destruction, which needs the GIL. Non-contiguous input raises BufferError.
class contiguous_buffer {
 public:
  contiguous_buffer(const pybind11::handle& object, bool writable);
  ~contiguous_buffer();
  contiguous_buffer(const contiguous_buffer&) = delete;
  contiguous_buffer& operator=(const contiguous_buffer&) = delete;
  contiguous_buffer(contiguous_buffer&& other) noexcept;
  contiguous_buffer& operator=(contiguous_buffer&&) = delete;

  [[nodiscard]] std::span<std::byte> bytes() const noexcept {
    return {static_cast<std::byte*>(view_.buf), static_cast<std::size_t>(view_.len)};
  }

 private:
  Py_buffer view_{};
  bool held_ = false;
};

/// A format code ("F32", "BF16", ...) as a dtype; InvalidArgument otherwise.
[[nodiscard]] safetensors::dtype dtype_from_code(const std::string& code);

/// A Python sequence of non-negative ints as a shape.
[[nodiscard]] std::vector<std::uint64_t> shape_from(const pybind11::handle& sequence);

/// A dict (or None) of str -> str as metadata.
[[nodiscard]] std::optional<safetensors::metadata_map> metadata_from(const pybind11::handle& dict_or_none);

/// Metadata as a Python dict, or None.
[[nodiscard]] pybind11::object metadata_to_python(const std::optional<safetensors::metadata_map>& metadata);

/// Indexers from Python: ('index', i), ('range', start, stop, step) or ('ellipsis',).
[[nodiscard]] std::vector<safetensors::slice_index> indexers_from(const pybind11::list& items);

/// "reference", "strict" or "lenient"; InvalidArgument otherwise.
[[nodiscard]] safetensors::parse_options parse_options_for(const std::string& policy);

}  // namespace st_python
