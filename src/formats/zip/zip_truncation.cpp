// SPDX-License-Identifier: Apache-2.0
// Telling a truncated zip (an interrupted download of a .pt or .npz) from a file that is
// no zip: the central directory sits at the end, so a cut file loses it while its local
// headers, which carry each member's size, still say how far the archive should reach.
#include <algorithm>
#include <array>
#include <optional>
#include <vector>

#include <fmt/format.h>

#include "formats/zip/zip_records.h"

namespace safetensors::detail {

namespace {

constexpr std::uint32_t end_signature = 0x06054b50;
constexpr std::uint32_t zip64_end_signature = 0x06064b50;
constexpr std::uint32_t descriptor_signature = 0x08074b50;
constexpr std::byte local_prefix[] = {std::byte{'P'}, std::byte{'K'}, std::byte{3}, std::byte{4}};
constexpr std::uint16_t data_descriptor_flag = 8;
constexpr std::size_t max_members_walked = 1'000'000;  // bounds the walk on a hostile file
constexpr std::string_view no_directory = "no readable central directory";

std::string truncated(std::uint64_t need, std::uint64_t file_size) {
  return fmt::format("truncated zip archive: the file has {} bytes, its records need at least {} ({})", file_size, need,
                     no_directory);
}

/// Where the data descriptor of a member whose data starts at `data` ends: the first
/// "PK\x07\x08" whose compressed size (32- or 64-bit) equals the distance from `data`.
/// nullopt when the file ends first. One pass over the rest of the file in 1 MiB reads.
std::optional<std::uint64_t> descriptor_end(const readonly_file& file, std::uint64_t data) {
  const std::uint64_t file_size = file.size();
  constexpr std::size_t window = std::size_t{1} << 20;
  std::vector<std::byte> buffer(window + 24);
  for (std::uint64_t at = data; at < file_size; at += window) {
    const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), file_size - at));
    if (!file.read_at(at, std::span(buffer.data(), n))) return std::nullopt;
    for (std::size_t i = 0; i + 4 <= std::min(n, window + 3); ++i) {
      if (load_le(buffer, i, 4) != descriptor_signature) continue;
      const std::uint64_t q = at + i;
      if (i + 16 <= n && load_le(buffer, i + 8, 4) == q - data) return q + 16;
      if (i + 24 <= n && load_le(buffer, i + 8, 8) == q - data) return q + 24;
    }
  }
  return std::nullopt;
}

}  // namespace

// Read errors are not reported: this only explains another one.
std::string describe_unreadable_zip(const readonly_file& file) {
  const std::uint64_t file_size = file.size();
  std::uint64_t pos = 0;
  std::size_t members = 0;
  std::array<std::byte, zip_local_fixed_bytes> header{};
  while (members < max_members_walked) {
    if (pos == file_size && members > 0) {
      return fmt::format(
          "truncated zip archive: the file ends after {} complete member{}, before the central "
          "directory ({})",
          members, members == 1 ? "" : "s", no_directory);
    }
    const std::size_t want = static_cast<std::size_t>(std::min<std::uint64_t>(header.size(), file_size - pos));
    if (!file.read_at(pos, std::span(header.data(), want))) break;
    if (want < 4) {  // cut inside the next signature
      const bool prefix = members > 0 && std::equal(header.begin(), header.begin() + static_cast<std::ptrdiff_t>(want),
                                                    std::begin(local_prefix));
      if (prefix) return truncated(pos + header.size(), file_size);
      break;
    }
    const auto signature = static_cast<std::uint32_t>(load_le(header, 0, 4));
    if (signature == zip_central_signature || signature == end_signature || signature == zip64_end_signature) {
      return fmt::format("damaged or truncated zip archive: the central directory at byte {} of {} cannot be read", pos,
                         file_size);
    }
    if (signature != zip_local_signature) break;
    if (want < header.size()) return truncated(pos + header.size(), file_size);
    const auto flags = static_cast<std::uint16_t>(load_le(header, 6, 2));
    zip_central_fields sizes;
    sizes.compressed_size = load_le(header, 18, 4);
    sizes.uncompressed_size = load_le(header, 22, 4);
    const std::uint64_t name_bytes = load_le(header, 26, 2);
    const std::uint64_t extra_bytes = load_le(header, 28, 2);
    const std::uint64_t data = pos + header.size() + name_bytes + extra_bytes;
    if (data > file_size) return truncated(data, file_size);
    if (sizes.compressed_size == 0xFFFFFFFF || sizes.uncompressed_size == 0xFFFFFFFF) {
      std::vector<std::byte> extra(static_cast<std::size_t>(extra_bytes));
      if (!file.read_at(pos + header.size() + name_bytes, extra)) break;
      if (!apply_zip64_extra(extra, sizes)) break;
    }
    if ((flags & data_descriptor_flag) != 0 && sizes.compressed_size == 0) {
      // The size follows the data (torch.save writes every record so): find it.
      const auto end = descriptor_end(file, data);
      if (!end) {
        std::string name(static_cast<std::size_t>(name_bytes), '\0');
        if (!file.read_at(pos + header.size(), std::as_writable_bytes(std::span(name)))) name.clear();
        return fmt::format(
            "truncated zip archive: the file has {} bytes and ends inside member {} '{}' (its data "
            "starts at byte {}; the member's size is written after its data, so the full size is "
            "unknown) ({})",
            file_size, members + 1, name, data, no_directory);
      }
      pos = *end;
      ++members;
      continue;
    }
    std::uint64_t end = 0;
    if (__builtin_add_overflow(data, sizes.compressed_size, &end)) break;
    if ((flags & data_descriptor_flag) != 0) end += 16;  // signature, CRC-32 and two sizes
    if (end > file_size) return truncated(end, file_size);
    pos = end;
    ++members;
  }
  return members == 0 ? std::string("not a zip archive (") + std::string(no_directory) + ")"
                      : fmt::format("damaged zip archive: {} (after {} readable members)", no_directory, members);
}

}  // namespace safetensors::detail
