// SPDX-License-Identifier: Apache-2.0
// The POSIX system-call table and the EINTR / short-transfer loops.
#include <fcntl.h>
#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

#include "platform/sys.h"

namespace safetensors::detail::sys {
namespace {

int real_open(const char* path, int flags, mode_t mode) { return ::open(path, flags | O_CLOEXEC, mode); }

int real_sync_file_range(int fd, off_t offset, off_t n, unsigned flags) {
#ifdef __linux__
  return ::sync_file_range(fd, offset, n, flags);
#else
  (void)fd;
  (void)offset;
  (void)n;
  (void)flags;
  return 0;
#endif
}

int real_set_direct_io(int fd, bool on) {
#if defined(__linux__) && defined(O_DIRECT)
  const int flags = ::fcntl(fd, F_GETFL);
  if (flags < 0) return -1;
  return ::fcntl(fd, F_SETFL, on ? (flags | O_DIRECT) : (flags & ~O_DIRECT));
#else
  (void)fd;
  (void)on;
  errno = ENOTSUP;
  return -1;
#endif
}

const table real_table = {
    real_open,
    ::close,
    ::fstat,
    ::pread,
    ::read,
    ::pwrite,
    ::fsync,
    ::ftruncate,
    ::rename,
    ::unlink,
    ::mmap,
    ::munmap,
    real_sync_file_range,
    real_set_direct_io,
};

const table* active = &real_table;

}  // namespace

const table& current() noexcept { return *active; }
const table& real() noexcept { return real_table; }

scoped_override::scoped_override(const table& replacement) noexcept : previous_(active) { active = &replacement; }
scoped_override::~scoped_override() { active = previous_; }

error io_error(const std::string& what, int err, const std::string& path) {
  error e = make_error(error_code::io, fmt::format("{}: {}", what, std::strerror(err)));
  e.os_errno = err;
  e.path = path;
  return e;
}

error nul_in_path(const std::string& path) {
  error e = make_error(error_code::invalid_argument,
                       fmt::format("the path has a NUL byte at byte {}: no file can be named so", path.find('\0')));
  e.path = path;
  return e;
}

result<int> open_file(const std::string& path, int flags, mode_t mode) {
  // open(2) would stop at the NUL and open another file ("model\0.tmp" is "model").
  if (path.find('\0') != std::string::npos) return nul_in_path(path);
  for (;;) {
    int fd = current().open(path.c_str(), flags, mode);
    if (fd >= 0) return fd;
    if (errno != EINTR) return io_error("cannot open file", errno, path);
  }
}

void close_quietly(int fd) noexcept {
  if (fd >= 0) (void)current().close(fd);
}

std::string_view special_file_kind(mode_t mode) noexcept {
  if (S_ISFIFO(mode)) return "pipe";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

error not_readable_by_offset(mode_t mode, const std::string& path, std::string_view as_what) {
  error e =
      make_error(error_code::io, fmt::format("a {} cannot be read{}{} (it is read by offset): save it to a file first",
                                             special_file_kind(mode), as_what.empty() ? "" : " ", as_what));
  e.os_errno = ESPIPE;
  e.path = path;
  return e;
}

result<int> open_for_offset_reads(const std::string& path, std::string_view as_what) {
  // O_NONBLOCK: opening a named pipe with no writer returns at once instead of waiting.
  auto fd = open_file(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (!fd) return fd;
  struct stat st {};
  if (current().fstat(*fd, &st) != 0) {
    const int err = errno;
    close_quietly(*fd);
    return io_error("cannot get file attributes", err, path);
  }
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    close_quietly(*fd);
    return not_readable_by_offset(st.st_mode, path, as_what);
  }
  // Reads of what remains (files, devices) block as usual.
  const int flags = ::fcntl(*fd, F_GETFL);
  if (flags == -1 || ::fcntl(*fd, F_SETFL, flags & ~O_NONBLOCK) == -1) {
    const int err = errno;
    close_quietly(*fd);
    return io_error("cannot open file", err, path);
  }
  return fd;
}

std::optional<mode_t> permissions_of(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) return std::nullopt;
  return st.st_mode & 07777;
}

status set_permissions(int fd, mode_t mode, const std::string& path) {
  while (::fchmod(fd, mode) != 0) {
    if (errno != EINTR) return io_error("cannot set the permissions of the temporary file", errno, path);
  }
  return {};
}

result<std::uint64_t> file_size(int fd, const std::string& path) {
  struct stat st {};
  if (current().fstat(fd, &st) != 0) return io_error("cannot get file attributes", errno, path);
  if (S_ISDIR(st.st_mode)) return io_error("cannot read", EISDIR, path);
  return static_cast<std::uint64_t>(st.st_size);
}

status pread_exact(int fd, void* buf, std::size_t n, std::uint64_t offset, const std::string& path) {
  auto* out = static_cast<char*>(buf);
  std::size_t done = 0;
  while (done < n) {
    ssize_t got = current().pread(fd, out + done, n - done, static_cast<off_t>(offset + done));
    if (got < 0) {
      if (errno == EINTR) continue;
      error e = io_error(fmt::format("read failed at byte {}", offset + done), errno, path);
      e.offset = offset + done;
      return e;
    }
    if (got == 0) {
      // Where the file ends now: a file cut short while open may end well before this read.
      struct stat st {};
      const std::uint64_t end =
          current().fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && static_cast<std::uint64_t>(st.st_size) < offset + done
              ? static_cast<std::uint64_t>(st.st_size)
              : offset + done;
      return make_error(error_code::io,
                        fmt::format("file ended at byte {} while reading {} bytes at byte {} (was it truncated?)", end,
                                    n, offset),
                        end)
          .with_path(path);
    }
    done += static_cast<std::size_t>(got);
  }
  return {};
}

error write_failed(std::uint64_t offset, int err, const std::string& path) {
  error e = io_error(fmt::format("write failed at byte {}", offset), err, path);
  e.offset = offset;
  return e;
}

status pwrite_all(int fd, const void* buf, std::size_t n, std::uint64_t offset, const std::string& path) {
  const auto* in = static_cast<const char*>(buf);
  std::size_t done = 0;
  while (done < n) {
    ssize_t put = current().pwrite(fd, in + done, n - done, static_cast<off_t>(offset + done));
    if (put < 0) {
      if (errno == EINTR) continue;
      return write_failed(offset + done, errno, path);
    }
    if (put == 0) return io_error(fmt::format("write made no progress at byte {}", offset + done), EIO, path);
    done += static_cast<std::size_t>(put);
  }
  return {};
}

}  // namespace safetensors::detail::sys
