// SPDX-License-Identifier: Apache-2.0
#include "safetensors/readonly_file.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "platform/sys.h"

namespace safetensors {

readonly_mapping::readonly_mapping(readonly_mapping&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

readonly_mapping& readonly_mapping::operator=(readonly_mapping&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

readonly_mapping::~readonly_mapping() { release(); }

void readonly_mapping::release() noexcept {
  // NOLINTNEXTLINE: munmap takes a non-const pointer to memory that is only ever read.
  if (data_ != nullptr) (void)detail::sys::current().munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

readonly_file::readonly_file(int fd, std::uint64_t size, std::string path) noexcept
    : fd_(fd), size_(size), path_(std::move(path)) {}

result<readonly_file> readonly_file::open(const std::string& path) {
  auto fd = detail::sys::open_for_offset_reads(path, "");  // also the other formats' files
  if (!fd) return std::move(fd).err();
  auto size = detail::sys::file_size(*fd, path);
  if (!size) {
    detail::sys::close_quietly(*fd);
    return std::move(size).err();
  }
  return readonly_file(*fd, *size, path);
}

readonly_file::readonly_file(readonly_file&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), size_(std::exchange(other.size_, 0)), path_(std::move(other.path_)) {}

readonly_file& readonly_file::operator=(readonly_file&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) detail::sys::close_quietly(fd_);
    fd_ = std::exchange(other.fd_, -1);
    size_ = std::exchange(other.size_, 0);
    path_ = std::move(other.path_);
  }
  return *this;
}

readonly_file::~readonly_file() {
  if (fd_ >= 0) detail::sys::close_quietly(fd_);
}

status readonly_file::read_at(std::uint64_t offset, std::span<std::byte> destination) const {
  return detail::sys::pread_exact(fd_, destination.data(), destination.size(), offset, path_);
}

result<readonly_mapping> readonly_file::map() const {
  readonly_mapping m;
  if (size_ == 0) return m;
  void* p = detail::sys::current().mmap(nullptr, static_cast<std::size_t>(size_), PROT_READ, MAP_PRIVATE, fd_, 0);
  if (p == MAP_FAILED) return detail::sys::io_error("cannot map the file", errno, path_);
  m.data_ = static_cast<const std::byte*>(p);
  m.size_ = static_cast<std::size_t>(size_);
  return m;
}

result<readonly_mapping> readonly_file::map(const std::string& path) {
  auto f = open(path);
  if (!f) return std::move(f).err();
  return f->map();
}

result<std::string> readonly_file::read_all(const std::string& path, std::uint64_t max_bytes, std::string_view what) {
  auto f = open(path);
  if (!f) return std::move(f).err();
  if (f->size() > max_bytes) {
    return make_error(error_code::limit_exceeded,
                      fmt::format("limit exceeded: {} has {} bytes, the limit is {}", what, f->size(), max_bytes))
        .with_path(path);
  }
  std::string text(static_cast<std::size_t>(f->size()), '\0');
  if (auto s = f->read_at(0, std::as_writable_bytes(std::span(text))); !s) return std::move(s).err();
  return text;
}

}  // namespace safetensors
