// SPDX-License-Identifier: Apache-2.0
// Internal: the pieces of zip records the reader decodes itself (little-endian fields, and
// the ZIP64 extended-information extra field of APPNOTE 4.5.3, which Debian's minizip 1.1
// never applies to central-directory entries on 64-bit Linux).
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>

#include "safetensors/error.h"
#include "safetensors/readonly_file.h"

namespace safetensors::detail {

/// Record signatures and the sizes of the records' fixed parts (APPNOTE 4.3.7, 4.3.12).
inline constexpr std::uint32_t zip_local_signature = 0x04034b50;
inline constexpr std::uint32_t zip_central_signature = 0x02014b50;
inline constexpr std::size_t zip_local_fixed_bytes = 30;

/// The little-endian unsigned integer of `width` (at most 8) bytes at `at`; the caller
/// has checked the bounds.
[[nodiscard]] inline std::uint64_t load_le(std::span<const std::byte> bytes, std::size_t at, std::size_t width) {
  std::uint64_t value = 0;
  for (std::size_t i = width; i-- > 0;) value = (value << 8) | std::to_integer<std::uint64_t>(bytes[at + i]);
  return value;
}

/// The central-directory fields that ZIP64 can widen, as read from the 32-bit record.
struct zip_central_fields {
  std::uint64_t uncompressed_size = 0;
  std::uint64_t compressed_size = 0;
  std::uint64_t local_header_offset = 0;
  std::uint32_t disk_number = 0;
};

/// Replaces each field that holds its "see ZIP64" marker (0xFFFFFFFF; 0xFFFF for the disk
/// number) with the value from the ZIP64 extra field in `extra`. Fields without the marker
/// are kept. InvalidFormat when an extra block overruns `extra` or the ZIP64 block is too
/// short for the fields it must hold; the message does not name the entry.
[[nodiscard]] status apply_zip64_extra(std::span<const std::byte> extra, zip_central_fields& fields);

/// Why an archive has no readable central directory, for a file minizip refused: when it
/// starts with local headers, they are walked to tell a truncated download ("truncated:
/// the archive's records need at least N bytes, the file has M") from a file that is not
/// a zip at all. Reads at most a bounded number of headers with pread.
[[nodiscard]] std::string describe_unreadable_zip(const readonly_file& file);

}  // namespace safetensors::detail
