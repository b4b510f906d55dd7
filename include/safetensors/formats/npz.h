// SPDX-License-Identifier: Apache-2.0
/// \file npz.h
/// NumPy `.npz` archives: a zip of `<name>.npy` members (`np.savez` stores them,
/// `np.savez_compressed` deflates them; NumPy marks every entry ZIP64).
///
/// Reading goes through the shared zip reader, with its limits against zip bombs
/// (entry count, total uncompressed size, compression ratio) and its confinement of
/// member names (no absolute paths, no `..`). Every member must be a `.npy` array; the
/// array's name is the member name without `.npy` (`arr_0` for positional arrays).
/// Writing is atomic (temporary file + rename) and streams each array's data.
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
#include "safetensors/formats/npy.h"

namespace safetensors {

struct npz_options {
  npy_options npy;
};

/// One array of an archive: its name and parsed `.npy` header.
struct npz_array {
  std::string name;        ///< member name without ".npy"
  npy_header header;       ///< data_offset is relative to the member's start
  std::size_t member = 0;  ///< index of the zip entry
};

/// An open `.npz` archive. Move-only.
class npz_archive {
 public:
  /// Opens `path`, lists its members and parses every `.npy` header. Errors (with `path`
  /// and the member as `tensor`): InvalidFormat, Unsupported, UnsafePath, UnsafeContent,
  /// LimitExceeded, ValidationOverflow, IoError.
  [[nodiscard]] static result<npz_archive> open(const std::string& path, const npz_options& options = {});

  npz_archive(npz_archive&&) noexcept;
  npz_archive& operator=(npz_archive&&) noexcept;
  npz_archive(const npz_archive&) = delete;
  npz_archive& operator=(const npz_archive&) = delete;
  ~npz_archive();

  /// Arrays in archive order.
  [[nodiscard]] std::span<const npz_array> arrays() const noexcept;
  [[nodiscard]] const std::string& path() const noexcept;

  /// The array's data already in SafeTensors order (stored, C order, little-endian),
  /// without a copy; nullopt when it must be converted with read().
  [[nodiscard]] std::optional<std::span<const std::byte>> view(const npz_array& array) const;
  /// Copies the array's data into `out` (size `header.data_bytes`) in C order,
  /// little-endian, inflating, transposing and byteswapping as needed.
  [[nodiscard]] status read(const npz_array& array, std::span<std::byte> out) const;

 private:
  struct state;
  explicit npz_archive(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

struct npz_write_options {
  bool compress = false;  ///< deflate members (np.savez_compressed) instead of storing them
};

/// Writes an `.npz` array by array, each array's data in chunks; the archive appears at
/// its path on commit() only.
class npz_writer {
 public:
  /// Errors: IoError.
  [[nodiscard]] static result<npz_writer> create(const std::string& path, const npz_write_options& options = {});

  npz_writer(npz_writer&&) noexcept;
  npz_writer& operator=(npz_writer&&) noexcept;
  npz_writer(const npz_writer&) = delete;
  npz_writer& operator=(const npz_writer&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~npz_writer();

  /// Starts array `name` (member `name.npy`) and writes its `.npy` header. Errors:
  /// Unsupported (no NumPy dtype), UnsafePath (a name NumPy readers would refuse or
  /// place outside the archive: empty, absolute, with `..` or a backslash), InvalidArgument
  /// (a duplicate name, or the previous array incomplete).
  [[nodiscard]] status begin_array(std::string_view name, dtype type, std::span<const std::uint64_t> shape);
  /// Appends C-order little-endian data to the current array. InvalidArgument past its size.
  [[nodiscard]] status append(std::span<const std::byte> chunk);
  /// begin_array + append of the whole data.
  [[nodiscard]] status add_array(std::string_view name, dtype type, std::span<const std::uint64_t> shape,
                                 std::span<const std::byte> data);
  /// Checks the last array is complete, writes the central directory, renames into place.
  [[nodiscard]] status commit();

 private:
  struct state;
  explicit npz_writer(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

}  // namespace safetensors
