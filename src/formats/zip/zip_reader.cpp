// SPDX-License-Identifier: Apache-2.0
// Zip reading: minizip walks the central directory; the ZIP64 fields it misses on LP64,
// the local headers and the entry data are read here with pread and zlib.
#include "formats/zip/zip_reader.h"

#include <unzip.h>
#include <zlib.h>

#include <algorithm>
#include <array>
#include <cstring>

#include <fmt/format.h>

#include "formats/zip/zip_records.h"

namespace safetensors::detail {

struct zip_reader::state {
  explicit state(readonly_file f) : file(std::move(f)) {}
  readonly_file file;
  unzFile handle = nullptr;
  std::vector<std::uint64_t> local_header_offsets;  ///< per entry, ZIP64-corrected
  ~state() {
    if (handle != nullptr) unzClose(handle);
  }
};

namespace {

constexpr std::uint16_t method_stored = 0;
constexpr std::uint16_t method_deflated = 8;
constexpr std::size_t max_name_bytes = 65535;  // the field is 16 bits wide
constexpr std::size_t max_extra_bytes = 65535;
constexpr std::size_t central_fixed_bytes = 46;
constexpr std::size_t max_chunk_bytes = std::size_t{64} << 20;  // bounds the buffer a caller can ask for
constexpr std::size_t compressed_chunk_bytes = std::size_t{256} << 10;

error archive_error(error_code code, const std::string& path, std::string message) {
  return make_error(code, std::move(message)).with_path(path);
}

/// The sizes and local header offset of the directory record at `at`, ZIP64 applied.
/// minizip keeps the local header offset private and leaves ZIP64 markers in the sizes on
/// LP64, so the fixed part of the record is read again here; its name and extra lengths
/// must match what minizip saw.
result<zip_central_fields> read_central_fields(const readonly_file& file, std::uint64_t at, const unz_file_info64& info,
                                               std::span<const std::byte> extra) {
  const std::uint64_t file_size = file.size();
  std::array<std::byte, central_fixed_bytes> record{};
  const bool fits = at <= file_size && file_size - at >= record.size();
  if (fits) {
    if (auto s = file.read_at(at, record); !s) return s.err();
  }
  if (!fits || load_le(record, 0, 4) != zip_central_signature || load_le(record, 28, 2) != info.size_filename ||
      load_le(record, 30, 2) != info.size_file_extra) {
    return make_error(error_code::invalid_format,
                      fmt::format("zip directory entry is not at byte {} where minizip found it (data before the "
                                  "archive is not supported)",
                                  at),
                      at);
  }
  zip_central_fields fields;
  fields.compressed_size = load_le(record, 20, 4);
  fields.uncompressed_size = load_le(record, 24, 4);
  fields.disk_number = static_cast<std::uint32_t>(load_le(record, 34, 2));
  fields.local_header_offset = load_le(record, 42, 4);
  if (auto s = apply_zip64_extra(extra, fields); !s) return s.err();
  if (fields.disk_number != 0) {
    return make_error(error_code::unsupported, "zip member lives on another disk of a split archive");
  }
  return fields;
}

/// Puts the member's name in front of a format error's message (I/O errors name the file).
error naming_entry(error e, const std::string& path, const zip_entry& entry) {
  if (e.code != error_code::io) e.message = fmt::format("{}: {}", entry.name, e.message);
  return std::move(e).with_path(path);
}

/// Raw-deflate decoding of one member whose compressed bytes are read from the archive as
/// needed; it never reads past the member's compressed size.
class member_inflater {
 public:
  member_inflater(const readonly_file& file, std::uint64_t data_offset, std::uint64_t compressed_size)
      : file_(file),
        next_(data_offset),
        left_(compressed_size),
        input_(static_cast<std::size_t>(std::min<std::uint64_t>(compressed_chunk_bytes, compressed_size))) {}
  member_inflater(const member_inflater&) = delete;
  member_inflater& operator=(const member_inflater&) = delete;
  ~member_inflater() {
    if (ready_) inflateEnd(&stream_);
  }

  [[nodiscard]] status start() {
    if (inflateInit2(&stream_, -MAX_WBITS) != Z_OK) {
      return make_error(error_code::io, "zlib could not start inflating (out of memory?)");
    }
    ready_ = true;
    return {};
  }

  /// Fills `out` (at most 4 GiB) as far as the stream goes: fewer bytes only when the
  /// deflate stream ends (finished()) or the compressed bytes run out (truncation).
  [[nodiscard]] result<std::size_t> fill(std::span<std::byte> out) {
    stream_.next_out = reinterpret_cast<Bytef*>(out.data());
    stream_.avail_out = static_cast<uInt>(out.size());
    while (stream_.avail_out > 0 && !ended_) {
      if (stream_.avail_in == 0 && left_ > 0) {
        const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(input_.size(), left_));
        if (auto s = file_.read_at(next_, std::span(input_.data(), n)); !s) return s.err();
        next_ += n;
        left_ -= n;
        stream_.next_in = reinterpret_cast<Bytef*>(input_.data());
        stream_.avail_in = static_cast<uInt>(n);
      }
      const int rc = inflate(&stream_, Z_NO_FLUSH);
      if (rc == Z_STREAM_END) {
        ended_ = true;
      } else if (rc == Z_BUF_ERROR && left_ == 0) {
        break;  // all input used and nothing more to produce: the stream is cut short
      } else if (rc != Z_OK) {
        return make_error(error_code::invalid_format,
                          fmt::format("corrupt deflate data ({})",
                                      stream_.msg != nullptr ? stream_.msg : fmt::format("zlib error {}", rc)));
      }
    }
    return out.size() - stream_.avail_out;
  }

  [[nodiscard]] bool finished() const noexcept { return ended_; }

 private:
  z_stream stream_{};
  bool ready_ = false;
  bool ended_ = false;
  const readonly_file& file_;
  std::uint64_t next_;  ///< archive offset of the next compressed byte
  std::uint64_t left_;  ///< compressed bytes not yet read
  std::vector<std::byte> input_;
};

/// The zip-bomb limits on a deflated entry: its ratio (above the floor) and the running
/// total of what deflated entries expand to.
status check_expansion(const zip_entry& entry, const zip_limits& limits, std::uint64_t& expanded) {
  const std::uint64_t compressed = std::max<std::uint64_t>(entry.compressed_size, 1);
  std::uint64_t allowed = 0;  // what the ratio lets this member expand to
  if (__builtin_mul_overflow(compressed, limits.max_compression_ratio, &allowed)) allowed = UINT64_MAX;
  if (entry.uncompressed_size > limits.ratio_floor_bytes && entry.uncompressed_size > allowed) {
    return make_error(error_code::limit_exceeded,
                      fmt::format("zip member inflates {} bytes to {} (ratio {}:1, over the limit of {}:1 for "
                                  "members above {} bytes): refusing a likely zip bomb",
                                  entry.compressed_size, entry.uncompressed_size, entry.uncompressed_size / compressed,
                                  limits.max_compression_ratio, limits.ratio_floor_bytes));
  }
  if (__builtin_add_overflow(expanded, entry.uncompressed_size, &expanded) || expanded > limits.max_expanded_bytes) {
    return make_error(error_code::limit_exceeded,
                      fmt::format("zip member inflates to {} bytes, which takes the archive's compressed members "
                                  "over the limit of {} bytes expanded: refusing a likely zip bomb",
                                  entry.uncompressed_size, limits.max_expanded_bytes));
  }
  return {};
}

/// The bytes a member occupies: its local header through the end of its data.
struct member_span {
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
  std::size_t entry = 0;
};

/// The span of each member whose local header can be read; the others fail when read.
std::vector<member_span> member_spans(const readonly_file& file, std::span<const zip_entry> entries,
                                      std::span<const std::uint64_t> local_offsets) {
  std::vector<member_span> spans;
  spans.reserve(entries.size());
  std::array<std::byte, zip_local_fixed_bytes> header{};
  for (const zip_entry& entry : entries) {
    const std::uint64_t local = local_offsets[entry.index];
    if (local > file.size() || file.size() - local < header.size() || !file.read_at(local, header) ||
        load_le(header, 0, 4) != zip_local_signature) {
      continue;
    }
    const std::uint64_t data = local + header.size() + load_le(header, 26, 2) + load_le(header, 28, 2);
    spans.push_back({local, std::min(data + entry.compressed_size, file.size()), entry.index});
  }
  return spans;
}

/// Members must not share bytes: an archive whose directory points many entries at one
/// member (an overlap bomb) expands without any compression. Info-ZIP's unzip and
/// CPython's zipfile refuse it too.
status check_no_overlap(const readonly_file& file, std::span<const zip_entry> entries,
                        std::span<const std::uint64_t> local_offsets) {
  std::vector<member_span> spans = member_spans(file, entries, local_offsets);
  std::sort(spans.begin(), spans.end(), [](const member_span& a, const member_span& b) {
    return a.begin != b.begin ? a.begin < b.begin : a.entry < b.entry;
  });
  const member_span* furthest = nullptr;  // of the spans so far, the one reaching furthest
  for (const member_span& span : spans) {
    if (furthest != nullptr && span.begin < furthest->end) {
      const zip_entry& a = entries[furthest->entry];
      const zip_entry& b = entries[span.entry];
      return make_error(error_code::unsafe_content,
                        fmt::format("zip members '{}' (bytes {} to {}) and '{}' (bytes {} to {}) overlap: refusing "
                                    "an archive whose members share bytes (a likely zip bomb)",
                                    a.name, furthest->begin, furthest->end, b.name, span.begin, span.end),
                        span.begin)
          .with_path(file.path());
    }
    if (furthest == nullptr || span.end > furthest->end) furthest = &span;
  }
  return {};
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

const std::string& zip_reader::path() const noexcept { return state_->file.path(); }

result<zip_reader> zip_reader::open(const std::string& path, const zip_limits& limits) {
  // minizip reports every failure the same way; open it ourselves first for errno.
  auto file = readonly_file::open(path);
  if (!file) return file.err();
  auto s = std::make_unique<state>(std::move(file).value());
  s->handle = unzOpen64(path.c_str());
  if (s->handle == nullptr) {
    return archive_error(error_code::invalid_format, path, describe_unreadable_zip(s->file));
  }
  unz_global_info64 global{};
  if (unzGetGlobalInfo64(s->handle, &global) != UNZ_OK) {
    return archive_error(error_code::invalid_format, path, "unreadable zip central directory");
  }
  if (global.number_entry > limits.max_entries) {
    return archive_error(
        error_code::unsafe_content, path,
        fmt::format("zip archive has {} entries, over the limit of {}", global.number_entry, limits.max_entries));
  }
  zip_reader reader(std::move(s));
  reader.entries_.reserve(static_cast<std::size_t>(global.number_entry));
  reader.state_->local_header_offsets.reserve(static_cast<std::size_t>(global.number_entry));

  std::vector<char> name(max_name_bytes + 1);
  std::vector<std::byte> extra(max_extra_bytes);
  std::uint64_t total = 0;
  std::uint64_t expanded = 0;  // declared sizes of the deflated entries so far
  int rc = unzGoToFirstFile(reader.state_->handle);
  while (rc == UNZ_OK) {
    unz_file_info64 info{};
    if (unzGetCurrentFileInfo64(reader.state_->handle, &info, name.data(), static_cast<uLong>(name.size()),
                                extra.data(), static_cast<uLong>(extra.size()), nullptr, 0) != UNZ_OK) {
      return archive_error(error_code::invalid_format, path,
                           fmt::format("unreadable zip directory entry #{}", reader.entries_.size()));
    }
    zip_entry entry;
    entry.name.assign(name.data(), std::min<std::size_t>(info.size_filename, max_name_bytes));
    entry.crc32 = static_cast<std::uint32_t>(info.crc);
    entry.stored = info.compression_method == method_stored;
    entry.index = reader.entries_.size();
    if (!is_confined_member_name(entry.name)) {
      return reader.entry_error(error_code::unsafe_path, entry, "zip member name leaves the archive");
    }
    const std::size_t extra_size = std::min<std::size_t>(info.size_file_extra, extra.size());
    auto fields = read_central_fields(reader.state_->file, unzGetOffset64(reader.state_->handle), info,
                                      std::span(extra.data(), extra_size));
    if (!fields) return naming_entry(std::move(fields).err(), path, entry);
    entry.compressed_size = fields->compressed_size;
    entry.uncompressed_size = fields->uncompressed_size;
    if ((info.flag & 1U) != 0) return reader.entry_error(error_code::invalid_format, entry, "zip member is encrypted");
    if (info.compression_method != method_stored && info.compression_method != method_deflated) {
      return reader.entry_error(
          error_code::unsupported, entry,
          fmt::format("zip compression method {} (only stored and deflate are supported)", info.compression_method));
    }
    if (entry.stored && entry.compressed_size != entry.uncompressed_size) {
      return reader.entry_error(error_code::invalid_format, entry,
                                fmt::format("stored zip member declares {} bytes but occupies {}",
                                            entry.uncompressed_size, entry.compressed_size));
    }
    if (entry.compressed_size > reader.state_->file.size()) {
      return reader.entry_error(error_code::invalid_format, entry,
                                fmt::format("zip member claims {} bytes, more than the {}-byte archive",
                                            entry.compressed_size, reader.state_->file.size()));
    }
    if (!entry.stored) {
      if (auto checked = check_expansion(entry, limits, expanded); !checked) {
        return naming_entry(std::move(checked).err(), path, entry);
      }
    }
    total += entry.uncompressed_size;
    if (total > limits.max_total_uncompressed || total < entry.uncompressed_size) {
      return archive_error(
          error_code::unsafe_content, path,
          fmt::format("zip members add up to more than {} bytes uncompressed", limits.max_total_uncompressed));
    }
    reader.state_->local_header_offsets.push_back(fields->local_header_offset);
    reader.entries_.push_back(std::move(entry));
    rc = unzGoToNextFile(reader.state_->handle);
  }
  if (rc != UNZ_END_OF_LIST_OF_FILE) {
    return archive_error(error_code::invalid_format, path,
                         fmt::format("zip central directory is truncated after {} entries", reader.entries_.size()));
  }
  if (auto disjoint = check_no_overlap(reader.state_->file, reader.entries_, reader.state_->local_header_offsets);
      !disjoint) {
    return std::move(disjoint).err();
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
  return naming_entry(make_error(code, std::move(message)), path(), entry);
}

result<std::uint64_t> zip_reader::locate_data(const zip_entry& entry) {
  if (entry.index >= entries_.size() || &entries_[entry.index] != &entry) {
    return make_error(error_code::invalid_argument, "zip entry does not belong to this archive");
  }
  // The data follows the local header, whose name and extra field may differ from the
  // directory's; the directory's sizes are the ones trusted.
  const std::uint64_t local = state_->local_header_offsets[entry.index];
  std::array<std::byte, zip_local_fixed_bytes> header{};
  const bool fits = local <= state_->file.size() && state_->file.size() - local >= header.size();
  if (fits) {
    if (auto s = state_->file.read_at(local, header); !s) return s.err();
  }
  if (!fits || load_le(header, 0, 4) != zip_local_signature) {
    error e = entry_error(error_code::invalid_format, entry, fmt::format("no zip local header at byte {}", local));
    e.offset = local;
    return e;
  }
  const std::uint64_t data = local + header.size() + load_le(header, 26, 2) + load_le(header, 28, 2);
  if (data > state_->file.size() || state_->file.size() - data < entry.compressed_size) {
    error e = entry_error(error_code::invalid_format, entry,
                          fmt::format("zip member data ({} bytes at byte {}) runs past the end of the {}-byte archive",
                                      entry.compressed_size, data, state_->file.size()));
    e.offset = data;
    return e;
  }
  return data;
}

result<std::uint64_t> zip_reader::stored_data_offset(const zip_entry& entry) {
  if (!entry.stored) return entry_error(error_code::invalid_argument, entry, "zip member is compressed");
  return locate_data(entry);
}

status zip_reader::read_chunks(const zip_entry& entry, std::size_t chunk_bytes, const chunk_sink& consume) {
  if (chunk_bytes == 0) return make_error(error_code::invalid_argument, "chunk size must be positive");
  auto data = locate_data(entry);
  if (!data) return data.err();
  std::vector<std::byte> buffer(static_cast<std::size_t>(
      std::min<std::uint64_t>({chunk_bytes, std::max<std::uint64_t>(entry.uncompressed_size, 1), max_chunk_bytes})));
  const auto corrupt = [&](std::string message) {
    return status(entry_error(error_code::invalid_format, entry, std::move(message)));
  };
  // Each step fills the buffer with the next bytes of the member and returns how many.
  std::function<result<std::size_t>(std::span<std::byte>)> next;
  member_inflater inflater(state_->file, *data, entry.compressed_size);
  if (entry.stored) {
    next = [&, at = *data](std::span<std::byte> out) mutable -> result<std::size_t> {
      if (auto s = state_->file.read_at(at, out); !s) return s.err();
      at += out.size();
      return out.size();
    };
  } else {
    if (auto s = inflater.start(); !s) return s;
    next = [&](std::span<std::byte> out) { return inflater.fill(out); };
  }
  std::uint32_t crc = 0;
  std::uint64_t done = 0;
  while (done < entry.uncompressed_size) {
    const auto want = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), entry.uncompressed_size - done));
    auto got = next(std::span(buffer.data(), want));
    if (!got) return naming_entry(std::move(got).err(), path(), entry);
    if (*got == 0)
      return corrupt(fmt::format("zip member is truncated: {} of {} bytes", done, entry.uncompressed_size));
    crc = static_cast<std::uint32_t>(crc32_z(crc, reinterpret_cast<const Bytef*>(buffer.data()), *got));
    if (auto s = consume(std::span<const std::byte>(buffer.data(), *got)); !s) return s;
    done += *got;
  }
  if (!entry.stored && !inflater.finished()) {
    // The stream must end here: an entry never inflates past what it declared.
    std::byte extra{};
    auto got = inflater.fill(std::span(&extra, 1));
    if (!got) return naming_entry(std::move(got).err(), path(), entry);
    if (*got != 0) {
      return corrupt(fmt::format("zip member inflates to more than its declared {} bytes", entry.uncompressed_size));
    }
    if (!inflater.finished()) return corrupt("zip member's deflate stream is truncated");
  }
  if (crc != entry.crc32) return corrupt("zip member fails its CRC-32 check");
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
