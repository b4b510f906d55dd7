// SPDX-License-Identifier: Apache-2.0
// Internal: writing a zip archive with minizip's zip.h into an atomic_file, so the
// archive appears at its path complete or not at all. Every entry is ZIP64-capable
// (as NumPy writes them), stored or deflated, with a fixed timestamp (1980-01-01) so
// the same input gives the same bytes.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <string_view>

#include "safetensors/error.h"

namespace safetensors::detail {

struct zip_writer_state;

class zip_writer {
 public:
  /// Creates the temporary file beside `path`. Errors: IoError.
  [[nodiscard]] static result<zip_writer> create(const std::string& path);

  zip_writer(zip_writer&&) noexcept;
  zip_writer& operator=(zip_writer&&) noexcept;
  zip_writer(const zip_writer&) = delete;
  zip_writer& operator=(const zip_writer&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~zip_writer();

  /// Starts entry `name`; the previous entry must be closed.
  [[nodiscard]] status begin_entry(std::string_view name, bool deflate);
  /// Appends bytes to the open entry (any size; split for minizip's 32-bit lengths).
  [[nodiscard]] status write(std::span<const std::byte> bytes);
  /// Closes the open entry (its CRC and sizes are written).
  [[nodiscard]] status end_entry();
  /// Writes the central directory, fsyncs and renames over the target.
  [[nodiscard]] status commit();

 private:
  explicit zip_writer(std::unique_ptr<zip_writer_state> s) noexcept;
  std::unique_ptr<zip_writer_state> state_;
};

}  // namespace safetensors::detail
