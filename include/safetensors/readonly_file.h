// SPDX-License-Identifier: Apache-2.0
/// \file readonly_file.h
/// A file opened for reading: its size, exact reads at any offset, and the whole file
/// mapped read-only. The readers of the other formats (GGUF, zip and `.npz`, PyTorch) sit
/// on it; like every I/O of the library it goes through the system-call table that the
/// fault-injection tests replace.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "safetensors/error.h"
#include "safetensors/lifetimebound.h"

namespace safetensors {

/// A whole file mapped read-only (an empty file is an empty span). Move-only; unmapped
/// when destroyed.
class readonly_mapping {
 public:
  readonly_mapping() = default;
  readonly_mapping(readonly_mapping&& other) noexcept;
  readonly_mapping& operator=(readonly_mapping&& other) noexcept;
  readonly_mapping(const readonly_mapping&) = delete;
  readonly_mapping& operator=(const readonly_mapping&) = delete;
  ~readonly_mapping();

  [[nodiscard]] std::span<const std::byte> bytes() const& noexcept SAFETENSORS_LIFETIMEBOUND { return {data_, size_}; }
  std::span<const std::byte> bytes() const&& = delete;

 private:
  friend class readonly_file;
  void release() noexcept;
  const std::byte* data_ = nullptr;
  std::size_t size_ = 0;
};

/// An open descriptor of a regular file. Move-only; closed when destroyed.
class readonly_file {
 public:
  /// Errors: IoError (open, fstat, a directory), with `path`.
  [[nodiscard]] static result<readonly_file> open(const std::string& path);

  readonly_file(readonly_file&& other) noexcept;
  readonly_file& operator=(readonly_file&& other) noexcept;
  readonly_file(const readonly_file&) = delete;
  readonly_file& operator=(const readonly_file&) = delete;
  ~readonly_file();

  /// The size when opened.
  [[nodiscard]] std::uint64_t size() const noexcept { return size_; }
  [[nodiscard]] const std::string& path() const noexcept { return path_; }

  /// Reads exactly `destination.size()` bytes at `offset` (retrying short reads and EINTR).
  /// Errors: IoError naming the path, or the offset when the file ends early.
  [[nodiscard]] status read_at(std::uint64_t offset, std::span<std::byte> destination) const;

  /// Maps the whole file read-only. The mapping outlives this object. Errors: IoError.
  [[nodiscard]] result<readonly_mapping> map() const;

  /// Opens `path` and maps it.
  [[nodiscard]] static result<readonly_mapping> map(const std::string& path);

  /// Reads a small file whole (an index, a config.json), `what` naming it in messages.
  /// Errors: IoError with the errno (ENOENT when it does not exist); LimitExceeded when it
  /// has more than `max_bytes`, before anything is allocated.
  [[nodiscard]] static result<std::string> read_all(const std::string& path, std::uint64_t max_bytes,
                                                    std::string_view what);

 private:
  readonly_file(int fd, std::uint64_t size, std::string path) noexcept;
  int fd_ = -1;
  std::uint64_t size_ = 0;
  std::string path_;
};

}  // namespace safetensors
