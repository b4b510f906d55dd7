// SPDX-License-Identifier: Apache-2.0
// Temporary file + fsync + rename; a large file goes to the device directly as it is written,
// others start write-back as they go.
#include "safetensors/atomic_file.h"
#include "safetensors/output_path.h"

#include <fcntl.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <utility>

#include <fmt/format.h>

#include "platform/sys.h"
#include "platform/temp_registry.h"
#include "writer/direct_writes.h"

namespace safetensors {
namespace {

std::string directory_of(const std::string& path) {
  auto slash = path.find_last_of('/');
  if (slash == std::string::npos) return ".";
  if (slash == 0) return "/";
  return path.substr(0, slash);
}

std::string base_name(const std::string& path) {
  auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

std::atomic<unsigned> temp_counter{0};

/// Starts write-back of bytes just written at `offset` (Linux; elsewhere nothing).
void start_writeback(int fd, std::uint64_t offset, std::uint64_t size) noexcept {
#ifdef __linux__
  // Each time the bytes written pass an 8 MiB boundary, the disk is asked to start writing
  // them (from the window they began in): it works while the caller produces the next bytes,
  // and commit's fsync finds little left. Advisory: a failure here is fsync's to report.
  constexpr std::uint64_t window = std::uint64_t{8} << 20;
  if (offset / window == (offset + size) / window) return;
  const std::uint64_t from = offset / window * window;
  (void)detail::sys::current().sync_file_range(fd, static_cast<off_t>(from), static_cast<off_t>(offset + size - from),
                                               SYNC_FILE_RANGE_WRITE);
#else
  (void)fd;
  (void)offset;
  (void)size;
#endif
}

/// ".NAME.tmp-PID-N" beside the target, NAME cut short (at a character's start) when the whole
/// would pass a file name's 255 bytes, which a target of up to 255 bytes may not.
std::string temporary_name(std::string_view name, unsigned long counter) {
  constexpr std::size_t max_name_bytes = 255;
  const std::string suffix = fmt::format(".tmp-{}-{}", ::getpid(), counter);
  const std::size_t room = max_name_bytes - 1 - suffix.size();  // 1: the leading dot
  if (name.size() > room) {
    std::size_t cut = room;
    while (cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0U) == 0x80U) --cut;  // a UTF-8 continuation
    name = name.substr(0, cut);
  }
  return fmt::format(".{}{}", name, suffix);
}

}  // namespace

result<atomic_file> atomic_file::create(const std::string& target, std::uint64_t size) {
  if (target.empty() || target.back() == '/') {
    return detail::sys::io_error("cannot write to a directory path", EISDIR, target);
  }
  if (target.find('\0') != std::string::npos) return detail::sys::nul_in_path(target);  // before any stat or rename
  auto landing = resolve_output_path(target);
  if (!landing) return std::move(landing).err();
  atomic_file f;
  f.target_ = std::move(landing).value();
  const std::string dir = directory_of(f.target_);
  const std::optional<mode_t> kept_mode = detail::sys::permissions_of(f.target_);
  for (int attempt = 0;; ++attempt) {
    f.temp_ = fmt::format("{}/{}", dir, temporary_name(base_name(f.target_), temp_counter.fetch_add(1)));
    const detail::signals_held held;  // created and registered as one step for a signal handler
    auto fd = detail::sys::open_file(f.temp_, O_RDWR | O_CREAT | O_EXCL, kept_mode ? 0600 : 0666);
    if (fd) {
      f.fd_ = *fd;
      f.registry_slot_ = detail::register_temporary(f.temp_);
      break;
    }
    if (fd.err().os_errno != EEXIST || attempt > 100) {
      error e = std::move(fd).err();
      e.message = fmt::format("cannot create a temporary file in '{}': {}", dir, e.message);
      e.path = target;
      f.temp_.clear();
      return e;
    }
  }
  if (kept_mode) {
    if (auto s = detail::sys::set_permissions(f.fd_, *kept_mode, target); !s) return std::move(s).err();
  }
  f.size_ = size;
  if (size >= detail::direct_writes::min_file_size) f.direct_ = detail::direct_writes::start(f.fd_);
  return f;
}

atomic_file::atomic_file(atomic_file&& other) noexcept
    : target_(std::move(other.target_)),
      temp_(std::move(other.temp_)),
      fd_(std::exchange(other.fd_, -1)),
      size_(other.size_),
      registry_slot_(std::exchange(other.registry_slot_, -1)),
      direct_(std::move(other.direct_)) {
  other.temp_.clear();
}

atomic_file& atomic_file::operator=(atomic_file&& other) noexcept {
  if (this != &other) {
    abort();
    target_ = std::move(other.target_);
    temp_ = std::exchange(other.temp_, {});
    fd_ = std::exchange(other.fd_, -1);
    registry_slot_ = std::exchange(other.registry_slot_, -1);
    size_ = other.size_;
    direct_ = std::move(other.direct_);
  }
  return *this;
}

atomic_file::~atomic_file() { abort(); }

void atomic_file::abort() noexcept {
  direct_.reset();
  detail::sys::close_quietly(fd_);
  fd_ = -1;
  if (!temp_.empty()) (void)detail::sys::current().unlink(temp_.c_str());
  temp_.clear();
  detail::unregister_temporary(std::exchange(registry_slot_, -1));
}

status atomic_file::write_at(std::uint64_t offset, std::span<const std::byte> bytes) {
  if (fd_ < 0) return detail::sys::io_error("write after commit or abort", EBADF, target_);
  if (direct_ && direct_->continues(offset)) {
    auto s = direct_->append(bytes, target_);
    if (!s) {
      abort();
      return s;
    }
    if (direct_->direct()) return s;
    return end_direct();  // it fell back to ordinary writes: so does the rest of the file
  }
  if (direct_) {
    if (auto s = end_direct(); !s) return s;  // out of sequence
  }
  auto s = detail::sys::pwrite_all(fd_, bytes.data(), bytes.size(), offset, target_);
  if (!s) {
    abort();
    return s;
  }
  start_writeback(fd_, offset, bytes.size());
  return s;
}

status atomic_file::end_direct() {
  auto s = direct_->finish(target_);
  direct_.reset();
  if (!s) abort();
  return s;
}

status atomic_file::commit() {
  if (auto s = sync(); !s) return s;
  return publish();
}

status atomic_file::sync() {
  if (fd_ < 0) return detail::sys::io_error("sync after sync, commit or abort", EBADF, target_);
  if (direct_) {
    if (auto s = end_direct(); !s) return s;
  }
  // Sized here, not at creation: writing into a file already extended to its final size
  // (a hole) is several times slower on common filesystems than appending. Size 0 means
  // the writer could not know it up front (zip output): the file keeps what was written.
  if (size_ != 0 && detail::sys::current().ftruncate(fd_, static_cast<off_t>(size_)) != 0) {
    error e = detail::sys::io_error(fmt::format("cannot size the temporary file to {} bytes", size_), errno, target_);
    abort();
    return e;
  }
  while (detail::sys::current().fsync(fd_) != 0) {
    if (errno == EINTR) continue;
    error e = detail::sys::io_error("cannot flush the file to disk", errno, target_);
    abort();
    return e;
  }
  if (detail::sys::current().close(fd_) != 0 && errno != EINTR) {
    fd_ = -1;
    error e = detail::sys::io_error("cannot close the temporary file", errno, target_);
    abort();
    return e;
  }
  fd_ = -1;
  return {};
}

status atomic_file::publish() {
  if (fd_ >= 0 || temp_.empty()) return detail::sys::io_error("publish before sync or after abort", EBADF, target_);
  if (detail::sys::current().rename(temp_.c_str(), target_.c_str()) != 0) {
    error e = detail::sys::io_error("cannot rename the temporary file over the target", errno, target_);
    abort();
    return e;
  }
  temp_.clear();
  detail::unregister_temporary(std::exchange(registry_slot_, -1));
  // Make the rename itself durable; failure here cannot undo it, so it is not reported.
  if (auto dir = detail::sys::open_file(directory_of(target_), O_RDONLY | O_DIRECTORY)) {
    (void)detail::sys::current().fsync(*dir);
    detail::sys::close_quietly(*dir);
  }
  return {};
}

}  // namespace safetensors
