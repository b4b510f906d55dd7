// SPDX-License-Identifier: Apache-2.0
// Internal: bounds-checked little-endian reads over the first bytes of a GGUF file.
// Running past the bytes held is an error naming the offset; when the file itself is
// longer, `incomplete()` says that more bytes would help (the reader then retries).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include <fmt/format.h>

#include "safetensors/error.h"

namespace safetensors::gguf::detail {

class cursor {
 public:
  cursor(std::span<const std::byte> bytes, std::uint64_t file_size) noexcept : bytes_(bytes), file_size_(file_size) {}

  [[nodiscard]] std::uint64_t pos() const noexcept { return pos_; }
  /// Bytes left in the file (not just in the span held).
  [[nodiscard]] std::uint64_t file_remaining() const noexcept { return file_size_ > pos_ ? file_size_ - pos_ : 0; }
  [[nodiscard]] bool incomplete() const noexcept { return incomplete_; }

  /// Checks that `n` more bytes are held; `what` names the field for the message.
  [[nodiscard]] status need(std::uint64_t n, const char* what) {
    if (n <= bytes_.size() - pos_) return {};
    if (bytes_.size() < file_size_) incomplete_ = true;
    return make_error(error_code::invalid_format,
                      fmt::format("file truncated in {}: needs {} bytes, {} left", what, n, file_remaining()), pos_);
  }

  template <class T>
  [[nodiscard]] status read(T& out, const char* what) {
    if (status s = need(sizeof(T), what); !s) return s;
    T v = 0;
    for (std::size_t i = 0; i < sizeof(T); ++i) {
      v = static_cast<T>(v |
                         static_cast<T>(static_cast<T>(std::to_integer<std::uint8_t>(bytes_[pos_ + i])) << (8 * i)));
    }
    out = v;
    pos_ += sizeof(T);
    return {};
  }

  /// The next `n` bytes (checked with need() first) and advances past them.
  [[nodiscard]] std::span<const std::byte> take(std::size_t n) noexcept {
    const auto out = bytes_.subspan(static_cast<std::size_t>(pos_), n);
    pos_ += n;
    return out;
  }

 private:
  std::span<const std::byte> bytes_;
  std::uint64_t file_size_;
  std::uint64_t pos_ = 0;
  bool incomplete_ = false;
};

}  // namespace safetensors::gguf::detail
