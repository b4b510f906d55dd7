// SPDX-License-Identifier: Apache-2.0
#include "writer/direct_writes.h"

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <new>
#include <system_error>

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

direct_writes::direct_writes(int fd, buffer first, buffer second) noexcept
    : fd_(fd), buffers_{std::move(first), std::move(second)} {}

direct_writes::~direct_writes() = default;

std::unique_ptr<direct_writes> direct_writes::start(int fd) {
  const auto allocate = [] {
    return buffer(static_cast<std::byte*>(::operator new[](buffer_size, std::align_val_t{alignment}, std::nothrow)));
  };
  buffer first = allocate();
  buffer second = allocate();
  if (!first || !second || sys::current().set_direct_io(fd, true) != 0) return nullptr;
  return std::unique_ptr<direct_writes>(new direct_writes(fd, std::move(first), std::move(second)));
}

void direct_writes::stop_direct() noexcept {
  // Failing to turn it off leaves the unaligned writes that follow to fail, and be reported.
  if (direct_.exchange(false)) (void)sys::current().set_direct_io(fd_, false);
}

status direct_writes::append(std::span<const std::byte> bytes, const std::string& path) {
  while (!bytes.empty()) {
    const std::size_t n = std::min(buffer_size - filled_, bytes.size());
    std::memcpy(buffers_[filling_].get() + filled_, bytes.data(), n);
    filled_ += n;
    end_ += n;
    bytes = bytes.subspan(n);
    if (filled_ == buffer_size) {
      if (auto s = submit(path); !s) return s;
    }
  }
  return {};
}

status direct_writes::wait() {
  if (!in_flight_.valid()) return {};
  return in_flight_.get();
}

status direct_writes::submit(const std::string& path) {
  if (auto s = wait(); !s) return s;
  const std::byte* data = buffers_[filling_].get();
  const std::uint64_t at = end_ - filled_;
  try {
    in_flight_ =
        std::async(std::launch::async, [this, data, at, path] { return write_out(data, buffer_size, at, path); });
  } catch (const std::system_error&) {  // no thread to be had: this write on the caller's
    if (auto s = write_out(data, buffer_size, at, path); !s) return s;
  }
  filling_ ^= 1;
  filled_ = 0;
  return {};
}

status direct_writes::write_out(const std::byte* data, std::size_t n, std::uint64_t at, const std::string& path) {
  std::size_t done = 0;
  // Only whole buffers go directly (their offsets are multiples of the buffer size); a partial
  // one is the file's tail, written by finish() after direct I/O is off.
  if (direct_.load() && n == buffer_size) {
    ssize_t put = -1;
    do {
      put = sys::current().pwrite(fd_, data, n, static_cast<off_t>(at));
    } while (put < 0 && errno == EINTR);
    if (put < 0 && errno != EINVAL) return sys::write_failed(at, errno, path);
    // EINVAL: the file system refuses direct I/O after all; a short write leaves the rest
    // unaligned. Either way the rest goes through the page cache.
    if (put >= 0) done = static_cast<std::size_t>(put);
    if (done < n) stop_direct();
  }
  if (done < n) return sys::pwrite_all(fd_, data + done, n - done, at + done, path);
  return {};
}

status direct_writes::finish(const std::string& path) {
  auto s = wait();
  stop_direct();
  if (!s) return s;
  const std::size_t n = std::exchange(filled_, 0);
  return n == 0 ? status{} : write_out(buffers_[filling_].get(), n, end_ - n, path);
}

}  // namespace safetensors::detail
