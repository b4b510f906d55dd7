// SPDX-License-Identifier: Apache-2.0
/// \file npz.h
/// NumPy `.npz` archives: a zip of `<name>.npy` members (`np.savez` stores them,
/// `np.savez_compressed` deflates them; NumPy marks every entry ZIP64).
///
/// Reading goes through the shared zip reader, with its limits against zip bombs
/// (entry count, total expanded size, compression ratio: `npz_options`) and its
/// confinement of member names (no absolute paths, no `..`). Data is streamed. Every member must be a `.npy` array; the
/// array's name is the member name without `.npy` (`arr_0` for positional arrays).
/// Writing is atomic (temporary file + rename) and streams each array's data.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/chunk_sink.h"
#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/formats/npy.h"
#include "safetensors/lifetimebound.h"

namespace safetensors::numpy {

/// Limits against zip bombs. A deflated member is refused up front (LimitExceeded naming
/// the member and the limit) when its declared size breaks one of them, and no member is
/// ever inflated past its declared size, so lying headers cannot get around them.
struct npz_options {
  npy_options npy;
  /// Deflated members together may expand to at most this many bytes.
  std::uint64_t max_expanded_bytes = std::uint64_t{4} << 30;
  /// A deflated member above `ratio_floor_bytes` may expand at most this many times its
  /// compressed size (deflate reaches about 1032:1 on constant data; tensors rarely 2:1).
  std::uint64_t max_compression_ratio = 200;
  std::uint64_t ratio_floor_bytes = std::uint64_t{1} << 20;
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
  /// Where the array's data starts in the archive file when its member is stored (not
  /// deflated); nullopt for a deflated member.
  [[nodiscard]] std::optional<std::uint64_t> stored_data_offset(const npz_array& array) const noexcept;

  /// The array's data already in SafeTensors order (stored, C order, little-endian),
  /// without a copy; nullopt when it must be converted with read().
  [[nodiscard]] std::optional<std::span<const std::byte>> view(const npz_array& array) const& SAFETENSORS_LIFETIMEBOUND;
  std::optional<std::span<const std::byte>> view(const npz_array& array) const&& = delete;
  /// Copies the array's data into `out` (size `header.data_bytes`) in C order,
  /// little-endian, inflating, transposing and byteswapping as needed.
  [[nodiscard]] status read(const npz_array& array, std::span<std::byte> out) const;
  /// Passes the array's data, C order and little-endian, to `sink` in chunks of at most
  /// `chunk_bytes`, inflating as it goes: memory stays at about one chunk, except for a
  /// Fortran-order array, which is reordered whole (at most its member's size, within the
  /// limits above). Allocation failure is LimitExceeded, never an exception.
  [[nodiscard]] status read_chunks(const npz_array& array, const chunk_sink& sink,
                                   std::size_t chunk_bytes = std::size_t{1} << 20) const;

 private:
  struct state;
  explicit npz_archive(std::unique_ptr<state> s) noexcept;
  [[nodiscard]] static result<npz_archive> open_archive(const std::string& path, const npz_options& options);
  [[nodiscard]] status read_into(const npz_array& array, std::span<std::byte> out) const;
  [[nodiscard]] status stream(const npz_array& array, const chunk_sink& sink, std::size_t chunk_bytes) const;
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

}  // namespace safetensors::numpy
