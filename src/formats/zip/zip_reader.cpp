// SPDX-License-Identifier: Apache-2.0
// Zip reading over minizip's unzip API: the directory is listed once and checked against
// the limits; entries are reopened by their saved directory position.
#include "formats/zip/zip_reader.h"

#include <fcntl.h>
#include <unzip.h>

#include <algorithm>
#include <cstring>

#include <fmt/format.h>

#include "platform/sys.h"

namespace safetensors::detail {

struct zip_reader::state {
  unzFile handle = nullptr;
  std::vector<unz64_file_pos> positions;  ///< per entry, for unzGoToFilePos64
  std::uint64_t file_size = 0;
  ~state() {
    if (handle != nullptr) unzClose(handle);
  }
};

namespace {

constexpr std::uint16_t method_stored = 0;
constexpr std::uint16_t method_deflated = 8;
constexpr std::size_t max_name_bytes = 65535;  // the field is 16 bits wide

error archive_error(error_code code, const std::string& path, std::string message) {
  error e = make_error(code, std::move(message));
  e.path = path;
  return e;
}

}  // namespace

bool is_confined_member_name(std::string_view name) noexcept {
  if (name.empty() || name.front() == '/' || name.find('\0') != std::string_view::npos ||
      name.find('\\') != std::string_view::npos) {
    return false;
  }
  if (name.size() >= 2 && name[1] == ':') return false;  // "C:..."
  std::size_t start = 0;
  while (start <= name.size()) {
    const std::size_t slash = std::min(name.find('/', start), name.size());
    const std::string_view part = name.substr(start, slash - start);
    if (part == ".." || part == ".") return false;
    start = slash + 1;
  }
  return true;
}

zip_reader::zip_reader(std::unique_ptr<state> s) : state_(std::move(s)) {}
zip_reader::zip_reader(zip_reader&&) noexcept = default;
zip_reader& zip_reader::operator=(zip_reader&&) noexcept = default;
zip_reader::~zip_reader() = default;

result<zip_reader> zip_reader::open(const std::string& path, const zip_limits& limits) {
  // minizip reports every failure the same way; open it ourselves first for errno.
  auto fd = sys::open_file(path, O_RDONLY | O_CLOEXEC);
  if (!fd) return fd.err();
  const sys::unique_fd owned(*fd);
  auto size = sys::file_size(owned.get(), path);
  if (!size) return size.err();

  auto s = std::make_unique<state>();
  s->file_size = *size;
  s->handle = unzOpen64(path.c_str());
  if (s->handle == nullptr) {
    return archive_error(error_code::invalid_format, path, "not a zip archive (no readable central directory)");
  }
  unz_global_info64 global{};
  if (unzGetGlobalInfo64(s->handle, &global) != UNZ_OK) {
    return archive_error(error_code::invalid_format, path, "unreadable zip central directory");
  }
  if (global.number_entry > limits.max_entries) {
    return archive_error(error_code::unsafe_content, path,
                         fmt::format("zip archive has {} entries, over the limit of {}", global.number_entry,
                                     limits.max_entries));
  }
  zip_reader reader(std::move(s));
  reader.path_ = path;
  reader.entries_.reserve(static_cast<std::size_t>(global.number_entry));
  reader.state_->positions.reserve(static_cast<std::size_t>(global.number_entry));

  std::vector<char> name(max_name_bytes + 1);
  std::uint64_t total = 0;
  int rc = unzGoToFirstFile(reader.state_->handle);
  while (rc == UNZ_OK) {
    unz_file_info64 info{};
    if (unzGetCurrentFileInfo64(reader.state_->handle, &info, name.data(), static_cast<uLong>(name.size()), nullptr,
                                0, nullptr, 0) != UNZ_OK) {
      return archive_error(error_code::invalid_format, path,
                           fmt::format("unreadable zip directory entry #{}", reader.entries_.size()));
    }
    zip_entry entry;
    entry.name.assign(name.data(), std::min<std::size_t>(info.size_filename, max_name_bytes));
    entry.compressed_size = info.compressed_size;
    entry.uncompressed_size = info.uncompressed_size;
    entry.crc32 = static_cast<std::uint32_t>(info.crc);
    entry.stored = info.compression_method == method_stored;
    entry.index = reader.entries_.size();
    if (!is_confined_member_name(entry.name)) {
      return reader.entry_error(error_code::unsafe_path, entry, "zip member name leaves the archive");
    }
    if ((info.flag & 1U) != 0) return reader.entry_error(error_code::invalid_format, entry, "zip member is encrypted");
    if (info.compression_method != method_stored && info.compression_method != method_deflated) {
      return reader.entry_error(error_code::unsupported, entry,
                                fmt::format("zip compression method {} (only stored and deflate are supported)",
                                            info.compression_method));
    }
    if (entry.stored && entry.compressed_size != entry.uncompressed_size) {
      return reader.entry_error(error_code::invalid_format, entry,
                                fmt::format("stored zip member declares {} bytes but occupies {}",
                                            entry.uncompressed_size, entry.compressed_size));
    }
    if (entry.compressed_size > reader.state_->file_size) {
      return reader.entry_error(error_code::invalid_format, entry,
                                fmt::format("zip member claims {} bytes, more than the {}-byte archive",
                                            entry.compressed_size, reader.state_->file_size));
    }
    if (!entry.stored && entry.uncompressed_size > 0 &&
        entry.uncompressed_size / std::max<std::uint64_t>(entry.compressed_size, 1) > limits.max_compression_ratio) {
      return reader.entry_error(error_code::unsafe_content, entry,
                                fmt::format("zip member inflates {} bytes to {} (ratio over {}:1): refusing a "
                                            "likely zip bomb",
                                            entry.compressed_size, entry.uncompressed_size,
                                            limits.max_compression_ratio));
    }
    total += entry.uncompressed_size;
    if (total > limits.max_total_uncompressed || total < entry.uncompressed_size) {
      return archive_error(error_code::unsafe_content, path,
                           fmt::format("zip members add up to more than {} bytes uncompressed",
                                       limits.max_total_uncompressed));
    }
    unz64_file_pos pos{};
    if (unzGetFilePos64(reader.state_->handle, &pos) != UNZ_OK) {
      return reader.entry_error(error_code::invalid_format, entry, "unreadable zip directory position");
    }
    reader.state_->positions.push_back(pos);
    reader.entries_.push_back(std::move(entry));
    rc = unzGoToNextFile(reader.state_->handle);
  }
  if (rc != UNZ_END_OF_LIST_OF_FILE) {
    return archive_error(error_code::invalid_format, path,
                         fmt::format("zip central directory is truncated after {} entries", reader.entries_.size()));
  }
  return reader;
}

const zip_entry* zip_reader::find(std::string_view name) const noexcept {
  for (const zip_entry& e : entries_) {
    if (e.name == name) return &e;
  }
  return nullptr;
}

error zip_reader::entry_error(error_code code, const zip_entry& entry, std::string message) const {
  error e = archive_error(code, path_, fmt::format("{}: {}", entry.name, message));
  return e;
}

status zip_reader::open_entry(const zip_entry& entry) {
  if (entry.index >= entries_.size() || &entries_[entry.index] != &entry) {
    return make_error(error_code::invalid_argument, "zip entry does not belong to this archive");
  }
  if (unzGoToFilePos64(state_->handle, &state_->positions[entry.index]) != UNZ_OK ||
      unzOpenCurrentFile(state_->handle) != UNZ_OK) {
    return entry_error(error_code::invalid_format, entry, "unreadable zip local header");
  }
  return {};
}

result<std::uint64_t> zip_reader::stored_data_offset(const zip_entry& entry) {
  if (!entry.stored) return entry_error(error_code::invalid_argument, entry, "zip member is compressed");
  if (auto s = open_entry(entry); !s) return s.err();
  const std::uint64_t offset = unzGetCurrentFileZStreamPos64(state_->handle);
  unzCloseCurrentFile(state_->handle);
  if (offset > state_->file_size || state_->file_size - offset < entry.uncompressed_size) {
    return entry_error(error_code::invalid_format, entry,
                       fmt::format("zip member data ({} bytes at byte {}) runs past the end of the {}-byte archive",
                                   entry.uncompressed_size, offset, state_->file_size));
  }
  return offset;
}

status zip_reader::read_chunks(const zip_entry& entry, std::size_t chunk_bytes,
                               const std::function<status(std::span<const std::byte>)>& consume) {
  if (chunk_bytes == 0) return make_error(error_code::invalid_argument, "chunk size must be positive");
  if (auto s = open_entry(entry); !s) return s;
  std::vector<std::byte> buffer(static_cast<std::size_t>(std::min<std::uint64_t>(
      chunk_bytes, std::max<std::uint64_t>(entry.uncompressed_size, 1))));
  std::uint64_t done = 0;
  const auto fail = [&](std::string message) {
    unzCloseCurrentFile(state_->handle);
    return status(entry_error(error_code::invalid_format, entry, std::move(message)));
  };
  while (done < entry.uncompressed_size) {
    const std::size_t want =
        static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), entry.uncompressed_size - done));
    const int got = unzReadCurrentFile(state_->handle, buffer.data(), static_cast<unsigned>(want));
    if (got < 0) return fail(fmt::format("corrupt zip data after {} bytes (minizip error {})", done, got));
    if (got == 0) {
      return fail(fmt::format("zip member is truncated: {} of {} bytes", done, entry.uncompressed_size));
    }
    if (auto s = consume(std::span<const std::byte>(buffer.data(), static_cast<std::size_t>(got))); !s) {
      unzCloseCurrentFile(state_->handle);
      return s;
    }
    done += static_cast<std::uint64_t>(got);
  }
  // One more byte must not exist: an entry never inflates past what it declared.
  std::byte extra{};
  if (unzReadCurrentFile(state_->handle, &extra, 1) != 0) {
    return fail(fmt::format("zip member inflates to more than its declared {} bytes", entry.uncompressed_size));
  }
  if (unzCloseCurrentFile(state_->handle) == UNZ_CRCERROR) return fail("zip member fails its CRC-32 check");
  return {};
}

status zip_reader::read(const zip_entry& entry, std::span<std::byte> out) {
  if (out.size() != entry.uncompressed_size) {
    return entry_error(error_code::invalid_argument, entry,
                       fmt::format("buffer of {} bytes for a {}-byte member", out.size(), entry.uncompressed_size));
  }
  std::size_t at = 0;
  return read_chunks(entry, std::size_t{1} << 20, [&](std::span<const std::byte> chunk) -> status {
    std::memcpy(out.data() + at, chunk.data(), chunk.size());
    at += chunk.size();
    return {};
  });
}

result<std::vector<std::byte>> zip_reader::read_all(const zip_entry& entry, std::uint64_t max_bytes) {
  if (entry.uncompressed_size > max_bytes) {
    return entry_error(error_code::unsafe_content, entry,
                       fmt::format("zip member is {} bytes, over the limit of {}", entry.uncompressed_size, max_bytes));
  }
  std::vector<std::byte> out(static_cast<std::size_t>(entry.uncompressed_size));
  if (auto s = read(entry, out); !s) return s.err();
  return out;
}

}  // namespace safetensors::detail
