// SPDX-License-Identifier: Apache-2.0
// A private (copy-on-write) read-write mapping of a whole file: the memory that loaded
// tensors and arrays view. Writes to it never reach the file; it lives as long as the
// last tensor viewing it (through the Python `Mapping` object's buffer).
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>

#include <pybind11/pybind11.h>

namespace st_python {

class private_mapping {
 public:
  /// Maps `path` when it is a regular file of at least `min_size` bytes; nullptr otherwise
  /// (missing file, pipe, device, mmap refused), so the caller falls back to the core's
  /// reader, which reports the error or reads the stream.
  [[nodiscard]] static std::shared_ptr<private_mapping> map(const std::string& path, std::size_t min_size);

  private_mapping(void* address, std::size_t length) noexcept : address_(address), length_(length) {}
  ~private_mapping();
  private_mapping(const private_mapping&) = delete;
  private_mapping& operator=(const private_mapping&) = delete;

  [[nodiscard]] std::span<std::byte> bytes() const noexcept { return {static_cast<std::byte*>(address_), length_}; }

 private:
  void* address_;
  std::size_t length_;
};

/// Registers `Mapping`: a writable one-dimensional uint8 buffer over a private_mapping.
void bind_mapping(pybind11::module_& m);

/// A new Python `Mapping` object sharing `mapping`.
[[nodiscard]] pybind11::object mapping_object(std::shared_ptr<private_mapping> mapping);

}  // namespace st_python
