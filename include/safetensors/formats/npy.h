// SPDX-License-Identifier: Apache-2.0
/// \file npy.h
/// NumPy `.npy` arrays: parsing the header, turning the data into SafeTensors order
/// (C order, little-endian), and writing `.npy` files.
///
/// Layout: "\x93NUMPY", major, minor (1.0, 2.0, 3.0), a little-endian header length
/// (u16 for 1.0, u32 for 2.0/3.0), then the header: a Python dict literal
/// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with spaces and a
/// newline, then the raw array data. The header is parsed by a strict literal parser that
/// evaluates nothing.
///
/// dtypes: `b1 i1 u1 i2 u2 f2 i4 u4 f4 i8 u8 f8 c8` map to the SafeTensors types of the
/// same width; big-endian (`>`) arrays are byteswapped on conversion. NumPy has no
/// bfloat16: MLX writes BF16 as `<V2`, so a 2-byte void reads as BF16 unless
/// `npy_options::void_as` says otherwise; other void widths need `void_as`.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/lifetimebound.h"

namespace safetensors::numpy {

struct npy_options {
  /// The dtype of void arrays (`|V<n>`, n = its byte width). nullopt: `V2` is BF16
  /// (MLX's convention) and other widths are Unsupported.
  std::optional<dtype> void_as;
  /// Headers longer than this are LimitExceeded (NumPy itself refuses 10,000 by default).
  std::uint32_t max_header_bytes = 1U << 20;
};

/// A parsed `.npy` preamble.
struct npy_header {
  std::uint8_t major_version = 1;
  std::uint8_t minor_version = 0;
  std::string descr;  ///< as written, e.g. "<f4", ">i8", "<V2"
  dtype type = dtype::U8;
  bool big_endian = false;     ///< data must be byteswapped
  bool fortran_order = false;  ///< as written (see needs_transpose)
  std::vector<std::uint64_t> shape;
  std::uint64_t data_offset = 0;  ///< size of the preamble: where the data starts
  std::uint64_t data_bytes = 0;   ///< element count x element width

  /// Fortran order that actually differs from C order (more than one dimension above 1).
  [[nodiscard]] bool needs_transpose() const noexcept;
  /// The data bytes are already SafeTensors bytes: they can be used without a copy.
  [[nodiscard]] bool is_c_order_little_endian() const noexcept { return !big_endian && !needs_transpose(); }
};

/// Bytes enough to know the preamble's size (magic, version, length field).
inline constexpr std::size_t npy_prefix_bytes = 12;

/// The preamble's size from the file's first bytes (at least npy_prefix_bytes, or the
/// whole file if shorter). Errors: InvalidFormat (magic, version, truncation),
/// LimitExceeded (header over `max_header_bytes`).
[[nodiscard]] result<std::uint64_t> npy_preamble_size(std::span<const std::byte> prefix,
                                                      const npy_options& options = {});

/// Parses a whole preamble; no I/O. `bytes` may extend past it (only the preamble is read).
/// Errors: InvalidFormat (syntax, keys, shape), Unsupported (dtypes SafeTensors lacks:
/// complex128, strings, objects, structured), ValidationOverflow (shape x width overflows).
/// Offsets in errors are byte positions in `bytes`.
[[nodiscard]] result<npy_header> parse_npy_header(std::span<const std::byte> bytes, const npy_options& options = {});

/// Copies `data_bytes` of array data laid out as `header` says into `out` (same size) in
/// C order, little-endian: transposes Fortran order and byteswaps big-endian elements.
[[nodiscard]] status npy_to_c_order(const npy_header& header, std::span<const std::byte> data,
                                    std::span<std::byte> out);

/// A `.npy` file, mapped read-only. Move-only.
class npy_file {
 public:
  /// Opens and checks `path`: a valid header whose data fills the rest of the file
  /// exactly (a shape promising more bytes than the file holds is InvalidFormat before
  /// anything is allocated). Errors carry `path`; see parse_npy_header for the rest.
  [[nodiscard]] static result<npy_file> open(const std::string& path, const npy_options& options = {});

  npy_file(npy_file&&) noexcept;
  npy_file& operator=(npy_file&&) noexcept;
  npy_file(const npy_file&) = delete;
  npy_file& operator=(const npy_file&) = delete;
  ~npy_file();

  [[nodiscard]] const npy_header& header() const noexcept;
  [[nodiscard]] const std::string& path() const noexcept;
  /// The data without a copy when it is C order, little-endian and aligned to its
  /// element width in memory; nullopt otherwise (use read()).
  [[nodiscard]] std::optional<std::span<const std::byte>> view() const& SAFETENSORS_LIFETIMEBOUND;
  std::optional<std::span<const std::byte>> view() const&& = delete;
  /// The data in C order, little-endian, into `out` of `header().data_bytes` bytes.
  [[nodiscard]] status read(std::span<std::byte> out) const;

 private:
  struct state;
  explicit npy_file(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

/// The NumPy descr for a SafeTensors dtype ("<f4", "|b1", BF16: "<V2" as MLX writes);
/// nullopt for the 8-, 6- and 4-bit floats, which NumPy cannot represent.
[[nodiscard]] std::optional<std::string> npy_descr(dtype type);

/// The preamble for a C-order little-endian array: version 1.0, or 2.0 when the header
/// does not fit 65535 bytes; padded with spaces so the data starts at a multiple of 64.
/// Errors: Unsupported (npy_descr has none).
[[nodiscard]] result<std::string> npy_encode_header(dtype type, std::span<const std::uint64_t> shape);

/// Writes one array to `path` atomically (temporary file + rename). `data` is C order,
/// little-endian, and must hold exactly the shape's bytes (InvalidArgument otherwise).
[[nodiscard]] status write_npy(const std::string& path, dtype type, std::span<const std::uint64_t> shape,
                               std::span<const std::byte> data);

/// Writes one `.npy` array whose data arrives in chunks (memory stays bounded by the
/// chunks); the file appears at its path on commit() only, as with write_npy.
class npy_writer {
 public:
  /// Errors: Unsupported (no NumPy dtype), ValidationOverflow, IoError; all carry `path`.
  [[nodiscard]] static result<npy_writer> create(const std::string& path, dtype type,
                                                 std::span<const std::uint64_t> shape);

  npy_writer(npy_writer&&) noexcept;
  npy_writer& operator=(npy_writer&&) noexcept;
  npy_writer(const npy_writer&) = delete;
  npy_writer& operator=(const npy_writer&) = delete;
  /// Removes the temporary file unless commit() succeeded.
  ~npy_writer();

  /// Appends C-order little-endian data. InvalidArgument past the array's size.
  [[nodiscard]] status append(std::span<const std::byte> chunk);
  /// Checks the data is complete, fsyncs, renames into place.
  [[nodiscard]] status commit();

 private:
  struct state;
  explicit npy_writer(std::unique_ptr<state> s) noexcept;
  std::unique_ptr<state> state_;
};

}  // namespace safetensors::numpy
