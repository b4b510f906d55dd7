// SPDX-License-Identifier: Apache-2.0
/// \file range_reader.h
/// A file's bytes fetched by range: what `file::open_reader` reads through when the bytes
/// are not on a local disk (remote.h implements it over HTTP(S)).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "safetensors/error.h"

namespace safetensors {

/// A fixed-size sequence of bytes read by offset. Implementations are thread-safe.
class range_reader {
 public:
  range_reader() = default;
  range_reader(const range_reader&) = delete;
  range_reader& operator=(const range_reader&) = delete;
  virtual ~range_reader() = default;

  /// Names the source in errors (for a URL: without credentials).
  [[nodiscard]] virtual const std::string& name() const noexcept = 0;
  /// The size of the whole file in bytes.
  [[nodiscard]] virtual std::uint64_t size() const noexcept = 0;
  /// Fills `destination` with bytes `[offset, offset + destination.size())`, or fails
  /// naming the range; never returns bytes of another range or another version of the file.
  [[nodiscard]] virtual status read(std::uint64_t offset, std::span<std::byte> destination) const = 0;
};

}  // namespace safetensors
