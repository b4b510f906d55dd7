// SPDX-License-Identifier: Apache-2.0
// minizip's zip.h over an atomic_file through a custom ioapi.
#include "formats/zip/zip_writer.h"

#include <minizip/zip.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <limits>
#include <optional>

#include <fmt/format.h>

#include "safetensors/atomic_file.h"

namespace safetensors::detail {

// The ioapi stream: a position in the atomic temporary file, and its first error.
struct zip_writer_state {
  std::optional<atomic_file> out;
  std::string path;
  std::uint64_t position = 0;
  std::uint64_t size = 0;
  std::optional<error> failure;
  zipFile zip = nullptr;
  bool entry_open = false;

  error fail(std::string what) {
    if (failure) return *failure;
    return make_error(error_code::io, std::move(what)).with_path(path);
  }
};

namespace {

voidpf ZCALLBACK open_stream(voidpf opaque, const void* /*filename*/, int /*mode*/) { return opaque; }

uLong ZCALLBACK read_stream(voidpf /*opaque*/, voidpf /*stream*/, void* /*buf*/, uLong /*size*/) {
  return 0;  // never needed: archives are only created, not appended to
}

uLong ZCALLBACK write_stream(voidpf /*opaque*/, voidpf stream, const void* buf, uLong size) {
  auto* s = static_cast<zip_writer_state*>(stream);
  if (s->failure) return 0;
  auto written = s->out->write_at(s->position, std::span(static_cast<const std::byte*>(buf), size));
  if (!written) {
    s->failure = std::move(written).err();
    return 0;
  }
  s->position += size;
  s->size = std::max(s->size, s->position);
  return size;
}

ZPOS64_T ZCALLBACK tell_stream(voidpf /*opaque*/, voidpf stream) {
  return static_cast<zip_writer_state*>(stream)->position;
}

long ZCALLBACK seek_stream(voidpf /*opaque*/, voidpf stream, ZPOS64_T offset, int origin) {
  auto* s = static_cast<zip_writer_state*>(stream);
  switch (origin) {
    case ZLIB_FILEFUNC_SEEK_SET: s->position = offset; return 0;
    case ZLIB_FILEFUNC_SEEK_CUR: s->position += offset; return 0;
    case ZLIB_FILEFUNC_SEEK_END: s->position = s->size + offset; return 0;
    default: return -1;
  }
}

int ZCALLBACK close_stream(voidpf /*opaque*/, voidpf /*stream*/) { return 0; }

int ZCALLBACK error_stream(voidpf /*opaque*/, voidpf stream) {
  return static_cast<zip_writer_state*>(stream)->failure ? 1 : 0;
}

}  // namespace

zip_writer::zip_writer(std::unique_ptr<zip_writer_state> s) noexcept : state_(std::move(s)) {}
zip_writer::zip_writer(zip_writer&&) noexcept = default;
zip_writer& zip_writer::operator=(zip_writer&&) noexcept = default;

zip_writer::~zip_writer() {
  if (state_ && state_->zip != nullptr) {
    // Frees minizip's state; the bytes it writes go to the temporary, which is removed.
    (void)zipClose(state_->zip, nullptr);
  }
}

result<zip_writer> zip_writer::create(const std::string& path) {
  auto s = std::make_unique<zip_writer_state>();
  s->path = path;
  auto out = atomic_file::create(path, 0);
  if (!out) return std::move(out).err();
  s->out.emplace(std::move(*out));
  zlib_filefunc64_def io{};
  io.zopen64_file = open_stream;
  io.zread_file = read_stream;
  io.zwrite_file = write_stream;
  io.ztell64_file = tell_stream;
  io.zseek64_file = seek_stream;
  io.zclose_file = close_stream;
  io.zerror_file = error_stream;
  io.opaque = s.get();
  s->zip = zipOpen2_64(path.c_str(), APPEND_STATUS_CREATE, nullptr, &io);
  if (s->zip == nullptr) return s->fail("cannot start the zip archive");
  return zip_writer(std::move(s));
}

status zip_writer::begin_entry(std::string_view name, bool deflate) {
  zip_writer_state& s = *state_;
  if (s.entry_open) return make_error(error_code::invalid_argument, "zip entry started before the last one ended");
  zip_fileinfo info{};
  info.tmz_date.tm_year = 1980;
  info.tmz_date.tm_mday = 1;
  const std::string entry_name(name);
  // General purpose bit 11: the name is UTF-8. Without it readers take a name beyond ASCII as
  // code page 437 (numpy's np.load listed 'café' as 'caf├⌐'); set, as Python's zipfile does,
  // only for such names.
  const bool ascii = std::all_of(name.begin(), name.end(), [](char c) { return static_cast<unsigned char>(c) < 0x80; });
  const uLong utf8_name_flag = ascii ? 0 : 0x800;
  const int rc = zipOpenNewFileInZip4_64(s.zip, entry_name.c_str(), &info, nullptr, 0, nullptr, 0, nullptr,
                                         deflate ? Z_DEFLATED : 0, deflate ? Z_DEFAULT_COMPRESSION : 0, 0, -MAX_WBITS,
                                         DEF_MEM_LEVEL, Z_DEFAULT_STRATEGY, nullptr, 0, /*versionMadeBy=*/0,
                                         utf8_name_flag, /*zip64=*/1);
  if (rc != ZIP_OK) return s.fail(fmt::format("cannot start zip entry '{}' (minizip error {})", name, rc));
  s.entry_open = true;
  return {};
}

status zip_writer::write(std::span<const std::byte> bytes) {
  zip_writer_state& s = *state_;
  constexpr std::size_t max_piece = 1U << 30;
  while (!bytes.empty()) {
    const std::size_t piece = std::min(bytes.size(), max_piece);
    const int rc = zipWriteInFileInZip(s.zip, bytes.data(), static_cast<unsigned>(piece));
    if (rc != ZIP_OK) return s.fail(fmt::format("cannot write to the zip archive (minizip error {})", rc));
    bytes = bytes.subspan(piece);
  }
  return {};
}

status zip_writer::end_entry() {
  zip_writer_state& s = *state_;
  s.entry_open = false;
  const int rc = zipCloseFileInZip(s.zip);
  if (rc != ZIP_OK) return s.fail(fmt::format("cannot finish a zip entry (minizip error {})", rc));
  return {};
}

status zip_writer::commit() {
  zip_writer_state& s = *state_;
  if (s.entry_open) {
    if (auto e = end_entry(); !e) return e;
  }
  const int rc = zipClose(s.zip, nullptr);
  s.zip = nullptr;
  if (rc != ZIP_OK || s.failure) return s.fail(fmt::format("cannot finish the zip archive (minizip error {})", rc));
  return s.out->commit();
}

}  // namespace safetensors::detail
