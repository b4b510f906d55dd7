// SPDX-License-Identifier: Apache-2.0
#include "writer/direct_writes.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>

#include <fmt/format.h>

#include "platform/sys.h"

namespace safetensors::detail {
namespace {

// Direct I/O wants the buffer, the file offset and the length aligned to the device's logical
// block: 4 KiB covers the devices in use (one that wants more refuses with EINVAL: ordinary
// writes then). 8 MiB per write kept a virtio disk at its speed (8, 16 and 32 MiB measured alike).
constexpr std::size_t alignment = 4096;
constexpr std::size_t buffer_size = std::size_t{8} << 20;

}  // namespace

void direct_writes::aligned_delete::operator()(std::byte* p) const noexcept {
  ::operator delete[](p, std::align_val_t{alignment});
}

direct_writes::direct_writes(int fd, std::unique_ptr<std::byte[], aligned_delete> buffer) noexcept
    : fd_(fd), buffer_(std::move(buffer)) {}

direct_writes::~direct_writes() = default;

std::unique_ptr<direct_writes> direct_writes::start(int fd) {
  std::unique_ptr<std::byte[], aligned_delete> buffer(
      static_cast<std::byte*>(::operator new[](buffer_size, std::align_val_t{alignment}, std::nothrow)));
  if (!buffer || sys::current().set_direct_io(fd, true) != 0) return nullptr;
  return std::unique_ptr<direct_writes>(new direct_writes(fd, std::move(buffer)));
}

void direct_writes::stop_direct() noexcept {
  if (!direct_) return;
  direct_ = false;
  // Failing to turn it off leaves the unaligned writes that follow to fail, and be reported.
  (void)sys::current().set_direct_io(fd_, false);
}

status direct_writes::append(std::span<const std::byte> bytes, const std::string& path) {
  while (!bytes.empty()) {
    const std::size_t n = std::min(buffer_size - filled_, bytes.size());
    std::memcpy(buffer_.get() + filled_, bytes.data(), n);
    filled_ += n;
    end_ += n;
    bytes = bytes.subspan(n);
    if (filled_ == buffer_size) {
      if (auto s = drain(path); !s) return s;
    }
  }
  return {};
}

status direct_writes::drain(const std::string& path) {
  const std::uint64_t at = end_ - filled_;
  std::size_t done = 0;
  // Only whole buffers go directly (their offsets are multiples of the buffer size); a partial
  // one is the file's tail, written by finish() after direct I/O is off.
  if (direct_ && filled_ == buffer_size) {
    ssize_t put = -1;
    do {
      put = sys::current().pwrite(fd_, buffer_.get(), filled_, static_cast<off_t>(at));
    } while (put < 0 && errno == EINTR);
    if (put < 0 && errno != EINVAL) {
      error e = sys::io_error(fmt::format("write failed at byte {}", at), errno, path);
      e.offset = at;
      return e;
    }
    // EINVAL: the file system refuses direct I/O after all; a short write leaves the rest
    // unaligned. Either way the rest goes through the page cache.
    if (put >= 0) done = static_cast<std::size_t>(put);
    if (done < filled_) stop_direct();
  }
  if (done < filled_) {
    if (auto s = sys::pwrite_all(fd_, buffer_.get() + done, filled_ - done, at + done, path); !s) return s;
  }
  filled_ = 0;
  return {};
}

status direct_writes::finish(const std::string& path) {
  stop_direct();
  return drain(path);
}

}  // namespace safetensors::detail
