// SPDX-License-Identifier: Apache-2.0
// The reader: opening with the mmap, pread or memory backends, views and copies.
#include "safetensors/file.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <limits>
#include <memory>

#include <fmt/format.h>

#include "header/header_builder.h"
#include "platform/sys.h"
#include "reader/shifted_copy.h"
#include "safetensors/sniff.h"

namespace safetensors {
namespace {

error tensor_not_found(std::string_view name) {
  return make_error(error_code::tensor_not_found, fmt::format("tensor '{}' not found", name), std::nullopt,
                    std::string(name));
}

bool is_regular(int fd) {
  struct stat st {};
  return detail::sys::current().fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
}

/// Reads a pipe or character device to its end.
status read_stream(int fd, std::vector<std::byte>& out, const std::string& path) {
  std::array<std::byte, 1 << 16> chunk{};
  for (;;) {
    ssize_t got = detail::sys::current().read(fd, chunk.data(), chunk.size());
    if (got < 0) {
      if (errno == EINTR) continue;
      return detail::sys::io_error("read failed", errno, path);
    }
    if (got == 0) return {};
    out.insert(out.end(), chunk.begin(), chunk.begin() + got);
  }
}

/// pread of `n` bytes at `offset` through a per-thread bounce buffer that stays in L2,
/// placed congruent to the offset so the kernel's copy runs at full speed, then copied
/// into place (reader/shifted_copy.h): with non-temporal stores for large reads, shifted for
/// smaller incongruent ones. 256 KiB per reading thread, kept for the thread's lifetime.
status pread_bounced(int fd, std::byte* destination, std::size_t n, std::uint64_t offset, const std::string& path) {
  constexpr std::size_t bounce_bytes = std::size_t{256} << 10;
  thread_local std::unique_ptr<std::byte[]> bounce;  // + 128: room to place it at any offset in a line
  if (!bounce) bounce = std::make_unique_for_overwrite<std::byte[]>(bounce_bytes + 128);
  const auto base = reinterpret_cast<std::uintptr_t>(bounce.get());
  std::byte* line = bounce.get() + ((64 - (base & 63U)) & 63U);  // 64-byte aligned
  std::byte* at = line + (offset & 63U);                         // congruent to every offset read below
  const bool streaming = n >= detail::stream_copy_threshold;
  for (std::size_t done = 0; done < n;) {
    const std::size_t take = std::min(bounce_bytes, n - done);  // a multiple of 64 until the tail
    if (auto s = detail::sys::pread_exact(fd, at, take, offset + done, path); !s) return s;
    if (streaming) {
      detail::stream_copy(destination + done, at, take);
    } else {
      detail::shifted_copy(destination + done, at, take);
    }
    done += take;
  }
  return {};
}

/// Reads the header of a source of `size` bytes whose first bytes are `prefix` (up to
/// sniff_prefix_bytes: enough to word a framing error, and often the whole header), the rest
/// through `read(offset, into)`; the JSON gets spare bytes after it so the parser reads it in
/// place (see parse_header_padded).
template <class Read>
result<header> read_header_from(std::span<const std::byte> prefix, std::uint64_t size, const open_options& options,
                                Read&& read) {
  auto n = read_header_length(prefix, size, options.parse);
  if (!n) return std::move(n).err();
  const auto json_size = static_cast<std::size_t>(*n);
  std::vector<std::byte> json(json_size + detail::json_padding);
  const std::size_t held = std::min(json_size, prefix.size() - 8);
  std::copy_n(prefix.begin() + 8, held, json.begin());
  if (held < json_size) {
    if (auto s = read(8 + held, std::span(json).subspan(held, json_size - held)); !s) return std::move(s).err();
  }
  const auto text = std::span(json).first(json_size);
  return options.parser != nullptr ? detail::parse_header_padded(*options.parser, text, size, options.parse)
                                   : detail::parse_header_padded(text, size, options.parse);
}

}  // namespace

std::string_view backend_name(io_backend b) noexcept {
  switch (b) {
    case io_backend::mmap: return "mmap";
    case io_backend::pread: return "pread";
    case io_backend::memory: return "memory";
    case io_backend::reader: return "reader";
  }
  return "mmap";
}

file::file(file&& other) noexcept
    : path_(std::move(other.path_)),
      header_(std::move(other.header_)),
      backend_(other.backend_),
      fd_(std::exchange(other.fd_, -1)),
      mapping_(std::exchange(other.mapping_, nullptr)),
      mapping_length_(std::exchange(other.mapping_length_, 0)),
      owned_(std::move(other.owned_)),
      bytes_(std::exchange(other.bytes_, {})),
      reader_(std::move(other.reader_)),
      size_(other.size_) {}

file& file::operator=(file&& other) noexcept {
  if (this != &other) {
    release();
    path_ = std::move(other.path_);
    header_ = std::move(other.header_);
    backend_ = other.backend_;
    fd_ = std::exchange(other.fd_, -1);
    mapping_ = std::exchange(other.mapping_, nullptr);
    mapping_length_ = std::exchange(other.mapping_length_, 0);
    owned_ = std::move(other.owned_);
    bytes_ = std::exchange(other.bytes_, {});
    reader_ = std::move(other.reader_);
    size_ = other.size_;
  }
  return *this;
}

file::~file() { release(); }

void file::release() noexcept {
  if (mapping_ != nullptr) (void)detail::sys::current().munmap(mapping_, mapping_length_);
  mapping_ = nullptr;
  detail::sys::close_quietly(fd_);
  fd_ = -1;
}

error file::with_path(error e) const { return std::move(e).with_path(path_); }

result<file> file::open(const std::string& path, const open_options& options) {
  file f;
  f.path_ = path;
  f.backend_ = options.backend == io_backend::memory || options.backend == io_backend::reader ? io_backend::mmap
                                                                                              : options.backend;
  // The mmap backend reads a pipe whole (waiting for its writer, as cat does); reads by offset
  // refuse one at once.
  auto fd = f.backend_ == io_backend::mmap ? detail::sys::open_file(path, O_RDONLY | O_CLOEXEC)
                                           : detail::sys::open_for_offset_reads(path);
  if (!fd) return std::move(fd).err();
  f.fd_ = *fd;
  auto size = detail::sys::file_size(f.fd_, path);
  if (!size) return std::move(size).err();
  f.size_ = *size;

  if (f.backend_ == io_backend::mmap) {
    if (!is_regular(f.fd_)) {
      // Pipes and devices cannot be mapped: read them whole instead.
      if (auto s = read_stream(f.fd_, f.owned_, path); !s) return std::move(s).err();
      f.bytes_ = f.owned_;
      f.size_ = f.owned_.size();
    } else if (f.size_ > 0) {
      // 32-bit targets (WebAssembly) cannot map more than their address space.
      if constexpr (sizeof(std::size_t) < sizeof(std::uint64_t)) {
        if (f.size_ > std::numeric_limits<std::size_t>::max()) {
          return detail::sys::io_error("file too large to map on this platform", EFBIG, path);
        }
      }
      const auto length = static_cast<std::size_t>(f.size_);
      void* p = detail::sys::current().mmap(nullptr, length, PROT_READ, MAP_PRIVATE, f.fd_, 0);
      if (p == MAP_FAILED) return detail::sys::io_error("cannot map file", errno, path);
      f.mapping_ = p;
      f.mapping_length_ = length;
      f.bytes_ = {static_cast<const std::byte*>(p), length};
    }
    // The mapping (or the copy) keeps the bytes; the descriptor is not needed any more, so
    // a checkpoint with thousands of shards does not run out of descriptors.
    detail::sys::close_quietly(f.fd_);
    f.fd_ = -1;
    auto h = options.parser != nullptr ? options.parser->parse_file_bytes(f.bytes_, options.parse)
                                       : parse_file_bytes(f.bytes_, options.parse);
    if (!h) return f.with_path(std::move(h).err());
    f.header_ = std::move(h).value();
    return f;
  }

  // pread: the first bytes and the header now, tensor bytes on request.
  std::array<std::byte, sniff_prefix_bytes> first{};
  const auto prefix = std::span(first).first(static_cast<std::size_t>(std::min<std::uint64_t>(f.size_, first.size())));
  if (auto s = detail::sys::pread_exact(f.fd_, prefix.data(), prefix.size(), 0, path); !s) return std::move(s).err();
  auto h = read_header_from(prefix, f.size_, options, [&](std::uint64_t offset, std::span<std::byte> into) {
    return detail::sys::pread_exact(f.fd_, into.data(), into.size(), offset, path);
  });
  if (!h) return f.with_path(std::move(h).err());
  f.header_ = std::move(h).value();
  return f;
}

result<file> file::open_reader(std::shared_ptr<const range_reader> source, const open_options& options) {
  file f;
  f.path_ = source->name();
  f.backend_ = io_backend::reader;
  f.size_ = source->size();
  f.reader_ = std::move(source);
  std::array<std::byte, sniff_prefix_bytes> first{};
  const auto prefix = std::span(first).first(static_cast<std::size_t>(std::min<std::uint64_t>(f.size_, first.size())));
  if (auto s = f.reader_->read(0, prefix); !s) return f.with_path(std::move(s).err());
  auto h = read_header_from(prefix, f.size_, options, [&](std::uint64_t offset, std::span<std::byte> into) {
    return f.reader_->read(offset, into);
  });
  if (!h) return f.with_path(std::move(h).err());
  f.header_ = std::move(h).value();
  return f;
}

result<file> file::from_buffer(std::span<const std::byte> bytes, const parse_options& options) {
  file f;
  f.backend_ = io_backend::memory;
  f.bytes_ = bytes;
  f.size_ = bytes.size();
  auto h = parse_file_bytes(bytes, options);
  if (!h) return std::move(h).err();
  f.header_ = std::move(h).value();
  return f;
}

tensor_view file::view(const tensor_info& info) const& noexcept {
  tensor_view v;
  v.info = &info;
  if (resident()) v.data = bytes_.subspan(header_.data_start() + info.begin, info.byte_size());
  return v;
}

result<tensor_view> file::view(std::string_view name) const& {
  const tensor_info* info = find(name);
  if (info == nullptr) return with_path(tensor_not_found(name));
  if (!resident()) {
    return with_path(make_error(error_code::invalid_argument,
                                "the pread backend has no in-memory views; use read_into() or load()", std::nullopt,
                                std::string(name)));
  }
  return view(*info);
}

status file::read_range(std::uint64_t offset, std::span<std::byte> destination) const {
  std::uint64_t end = 0;
  if (__builtin_add_overflow(offset, destination.size(), &end) || end > size_) {
    return with_path(make_error(
        error_code::invalid_argument,
        fmt::format("range of {} bytes at byte {} is outside the file of {} bytes", destination.size(), offset, size_),
        offset));
  }
  if (resident()) {
    detail::copy_bytes(destination.data(), bytes_.data() + offset, destination.size());
    return {};
  }
  if (reader_) {
    if (auto s = reader_->read(offset, destination); !s) return with_path(std::move(s).err());
    return {};
  }
  if (destination.size() >= detail::stream_copy_threshold ||
      (destination.size() >= detail::shifted_copy_threshold && detail::incongruent(destination.data(), offset))) {
    return pread_bounced(fd_, destination.data(), destination.size(), offset, path_);
  }
  return detail::sys::pread_exact(fd_, destination.data(), destination.size(), offset, path_);
}

status file::read_into(const tensor_info& info, std::span<std::byte> destination) const {
  if (destination.size() != info.byte_size()) {
    return with_path(
        make_error(error_code::invalid_argument,
                   fmt::format("destination has {} bytes, the tensor has {}", destination.size(), info.byte_size()),
                   std::nullopt, std::string(info.name)));
  }
  auto s = read_range(header_.data_start() + info.begin, destination);
  if (!s) {
    error e = std::move(s).err();
    e.tensor = std::string(info.name);
    return e;
  }
  return {};
}

status file::read_into(std::string_view name, std::span<std::byte> destination) const {
  const tensor_info* info = find(name);
  if (info == nullptr) return with_path(tensor_not_found(name));
  return read_into(*info, destination);
}

result<std::vector<std::byte>> file::load(std::string_view name) const {
  const tensor_info* info = find(name);
  if (info == nullptr) return with_path(tensor_not_found(name));
  std::vector<std::byte> out(info->byte_size());
  if (auto s = read_into(*info, out); !s) return std::move(s).err();
  return out;
}

header file::take_header() && noexcept {
  release();
  bytes_ = {};
  safetensors::header out = std::move(header_);
  header_ = safetensors::header();
  return out;
}

result<header> read_header(const std::string& path, const parse_options& options) {
  open_options o;
  o.backend = io_backend::pread;
  o.parse = options;
  auto f = file::open(path, o);
  if (!f) return std::move(f).err();
  // The header is moved out; the file (and its descriptor) closes here.
  return std::move(f->header_);
}

result<header> read_header(std::shared_ptr<const range_reader> source, const parse_options& options) {
  open_options o;
  o.parse = options;
  auto f = file::open_reader(std::move(source), o);
  if (!f) return std::move(f).err();
  return std::move(f->header_);
}

}  // namespace safetensors
