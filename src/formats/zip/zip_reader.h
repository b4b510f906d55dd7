// SPDX-License-Identifier: Apache-2.0
// Internal: reading zip archives (PyTorch checkpoints, .npz; ZIP64 included) with the
// limits a converter of untrusted files needs. The central directory is distrusted:
// entry count, declared sizes and compression ratios are capped before anything is
// inflated, names must stay inside the archive (no absolute paths, no `..`), and an
// entry never inflates to more than it declared. Not thread-safe: one reader, one thread.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/chunk_sink.h"
#include "safetensors/error.h"

namespace safetensors::detail {

struct zip_limits {
  std::uint64_t max_entries = 1'000'000;
  std::uint64_t max_total_uncompressed = std::uint64_t{1} << 40;  ///< 1 TiB over all entries
  /// Deflated entries together may declare at most this many uncompressed bytes
  /// (LimitExceeded). Stored entries are not counted: they cannot be larger than the file.
  std::uint64_t max_expanded_bytes = std::uint64_t{4} << 30;
  /// Declared uncompressed / compressed size of a deflated entry larger than
  /// `ratio_floor_bytes` (LimitExceeded above it). Deflate tops out near 1032:1 on
  /// constant data; real tensors compress a few times at most.
  std::uint64_t max_compression_ratio = 200;
  std::uint64_t ratio_floor_bytes = std::uint64_t{1} << 20;
};

struct zip_entry {
  std::string name;
  std::uint64_t compressed_size = 0;
  std::uint64_t uncompressed_size = 0;
  std::uint32_t crc32 = 0;
  bool stored = false;    ///< method 0: the bytes sit in the archive as they are
  std::size_t index = 0;  ///< position in entries()
};

class zip_reader {
 public:
  /// Opens `path` and reads its central directory. Errors: IoError (cannot open),
  /// InvalidFormat (not a zip, or truncated: the message says so and gives the size the
  /// archive's own records imply; encrypted or unknown-method entries), UnsafePath (an
  /// entry name leaves the archive), UnsafeContent (entry count or total size over the
  /// limits; two members whose local header and data overlap, naming both and their byte
  /// ranges: an overlap bomb expands without compression), LimitExceeded (a deflated entry
  /// over the expanded-size or ratio limit). Entries are never inflated past their declared
  /// size, so these up-front checks bound what reading can produce even when the sizes in
  /// the archive lie.
  [[nodiscard]] static result<zip_reader> open(const std::string& path, const zip_limits& limits = {});

  zip_reader(zip_reader&&) noexcept;
  zip_reader& operator=(zip_reader&&) noexcept;
  ~zip_reader();

  [[nodiscard]] const std::vector<zip_entry>& entries() const noexcept { return entries_; }
  /// The entry named exactly `name`, or nullptr.
  [[nodiscard]] const zip_entry* find(std::string_view name) const noexcept;
  [[nodiscard]] const std::string& path() const noexcept;

  /// Byte offset in the archive file where a stored entry's bytes start (for zero-copy
  /// reads from a mapping). Errors: InvalidArgument for a deflated entry, InvalidFormat
  /// when the local header disagrees or the data runs past the end of the file.
  [[nodiscard]] result<std::uint64_t> stored_data_offset(const zip_entry& entry);

  /// Inflates the whole entry into `out`, whose size must equal the declared size; fails
  /// with InvalidFormat if the data is shorter, longer, or its CRC-32 differs.
  [[nodiscard]] status read(const zip_entry& entry, std::span<std::byte> out);

  /// Reads an entry of at most `max_bytes` into a new buffer (UnsafeContent if larger).
  [[nodiscard]] result<std::vector<std::byte>> read_all(const zip_entry& entry, std::uint64_t max_bytes);

  /// Streams the entry in chunks of at most `chunk_bytes` to `consume`, checking length
  /// and CRC-32 as read() does; stops at the first error from `consume`.
  [[nodiscard]] status read_chunks(const zip_entry& entry, std::size_t chunk_bytes, const chunk_sink& consume);

 private:
  struct state;
  explicit zip_reader(std::unique_ptr<state> s);
  [[nodiscard]] error entry_error(error_code code, const zip_entry& entry, std::string message) const;
  /// Archive offset of the entry's data, found through its local header and checked to
  /// lie, with its compressed size, inside the file.
  [[nodiscard]] result<std::uint64_t> locate_data(const zip_entry& entry);

  std::unique_ptr<state> state_;
  std::vector<zip_entry> entries_;
};

/// Whether an archive member name is safe to use as a relative path: not empty, no NUL,
/// no backslash, not absolute, no drive letter, no `.` or `..` component.
[[nodiscard]] bool is_confined_member_name(std::string_view name) noexcept;

}  // namespace safetensors::detail
