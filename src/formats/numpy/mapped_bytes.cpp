// SPDX-License-Identifier: Apache-2.0
#include "formats/numpy/mapped_bytes.h"

#include <fcntl.h>
#include <sys/mman.h>

#include <cerrno>
#include <utility>

#include "platform/sys.h"

namespace safetensors::detail {

result<mapped_bytes> mapped_bytes::open(const std::string& path) {
  auto fd = detail::sys::open_file(path, O_RDONLY | O_CLOEXEC);
  if (!fd) return std::move(fd).err();
  const detail::sys::unique_fd owner(*fd);
  auto size = detail::sys::file_size(*fd, path);
  if (!size) return std::move(size).err();
  mapped_bytes m;
  if (*size == 0) return m;
  void* p = detail::sys::current().mmap(nullptr, static_cast<std::size_t>(*size), PROT_READ, MAP_PRIVATE, *fd, 0);
  if (p == MAP_FAILED) return detail::sys::io_error("cannot map file", errno, path);
  m.data_ = static_cast<const std::byte*>(p);
  m.size_ = static_cast<std::size_t>(*size);
  return m;
}

mapped_bytes::mapped_bytes(mapped_bytes&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

mapped_bytes& mapped_bytes::operator=(mapped_bytes&& other) noexcept {
  if (this != &other) {
    release();
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

mapped_bytes::~mapped_bytes() { release(); }

void mapped_bytes::release() noexcept {
  // NOLINTNEXTLINE: munmap takes a non-const pointer to memory we only ever read.
  if (data_ != nullptr) (void)detail::sys::current().munmap(const_cast<std::byte*>(data_), size_);
  data_ = nullptr;
  size_ = 0;
}

}  // namespace safetensors::detail
