// SPDX-License-Identifier: Apache-2.0
// Internal: a whole file mapped read-only (an empty file is an empty span). Move-only.
#pragma once

#include <cstddef>
#include <span>
#include <string>

#include "safetensors/error.h"

namespace safetensors::detail {

class mapped_bytes {
 public:
  /// Errors: IoError (open, fstat, directory, mmap), with `path`.
  [[nodiscard]] static result<mapped_bytes> open(const std::string& path);

  mapped_bytes(mapped_bytes&& other) noexcept;
  mapped_bytes& operator=(mapped_bytes&& other) noexcept;
  mapped_bytes(const mapped_bytes&) = delete;
  mapped_bytes& operator=(const mapped_bytes&) = delete;
  ~mapped_bytes();

  [[nodiscard]] std::span<const std::byte> bytes() const noexcept { return {data_, size_}; }

 private:
  mapped_bytes() = default;
  void release() noexcept;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

}  // namespace safetensors::detail
