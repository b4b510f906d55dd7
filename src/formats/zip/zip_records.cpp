// SPDX-License-Identifier: Apache-2.0
#include "formats/zip/zip_records.h"

#include <fmt/format.h>

namespace safetensors::detail {

namespace {

constexpr std::uint16_t zip64_header_id = 0x0001;
constexpr std::uint32_t marker32 = 0xFFFFFFFF;
constexpr std::uint16_t marker16 = 0xFFFF;

}  // namespace

status apply_zip64_extra(std::span<const std::byte> extra, zip_central_fields& fields) {
  std::size_t at = 0;
  while (extra.size() - at >= 4) {
    const auto id = static_cast<std::uint16_t>(load_le(extra, at, 2));
    const auto size = static_cast<std::size_t>(load_le(extra, at + 2, 2));
    at += 4;
    if (size > extra.size() - at) {
      return make_error(error_code::invalid_format,
                        fmt::format("zip extra field block 0x{:04x} claims {} bytes but only {} remain", id, size,
                                    extra.size() - at));
    }
    if (id == zip64_header_id) {
      const std::span<const std::byte> block = extra.subspan(at, size);
      std::size_t used = 0;
      // Only the marked fields are present, always in this order.
      const auto take = [&](std::uint64_t& field, std::size_t width, const char* what) -> status {
        if (block.size() - used < width) {
          return make_error(error_code::invalid_format,
                            fmt::format("ZIP64 extra field of {} bytes is too short for the {}", block.size(), what));
        }
        field = load_le(block, used, width);
        used += width;
        return {};
      };
      if (fields.uncompressed_size == marker32) {
        if (auto s = take(fields.uncompressed_size, 8, "uncompressed size"); !s) return s;
      }
      if (fields.compressed_size == marker32) {
        if (auto s = take(fields.compressed_size, 8, "compressed size"); !s) return s;
      }
      if (fields.local_header_offset == marker32) {
        if (auto s = take(fields.local_header_offset, 8, "local header offset"); !s) return s;
      }
      if (fields.disk_number == marker16) {
        std::uint64_t disk = 0;
        if (auto s = take(disk, 4, "disk number"); !s) return s;
        fields.disk_number = static_cast<std::uint32_t>(disk);
      }
      return {};
    }
    at += size;
  }
  return {};
}

}  // namespace safetensors::detail
