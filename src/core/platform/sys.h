// SPDX-License-Identifier: Apache-2.0
// Internal: every system call the library makes goes through this table, so tests can
// inject faults (EINTR, EIO, ENOSPC, short reads and writes, mapping failures).
// The helpers below retry EINTR and loop over short transfers in one place.
#pragma once

#include <sys/stat.h>
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>

#include "safetensors/error.h"

namespace safetensors::detail::sys {

struct table {
  int (*open)(const char* path, int flags, mode_t mode);
  int (*close)(int fd);
  int (*fstat)(int fd, struct stat* st);
  ssize_t (*pread)(int fd, void* buf, std::size_t n, off_t offset);
  ssize_t (*read)(int fd, void* buf, std::size_t n);
  ssize_t (*pwrite)(int fd, const void* buf, std::size_t n, off_t offset);
  int (*fsync)(int fd);
  int (*ftruncate)(int fd, off_t size);
  int (*rename)(const char* from, const char* to);
  int (*unlink)(const char* path);
  void* (*mmap)(void* addr, std::size_t len, int prot, int flags, int fd, off_t offset);
  int (*munmap)(void* addr, std::size_t len);
  /// sync_file_range(2) (Linux; elsewhere does nothing and returns 0): starts write-back early.
  int (*sync_file_range)(int fd, off_t offset, off_t n, unsigned flags);
  /// Turns direct I/O (O_DIRECT: writes go to the device, not the page cache) on or off for
  /// `fd` through fcntl(2); -1 with errno where the file system or platform refuses it.
  int (*set_direct_io)(int fd, bool on);
};

/// The table in use (the real system calls unless a test replaced them).
[[nodiscard]] const table& current() noexcept;

/// Test seam: replaces the table for the lifetime of the guard. Not thread-safe.
class scoped_override {
 public:
  explicit scoped_override(const table& replacement) noexcept;
  ~scoped_override();
  scoped_override(const scoped_override&) = delete;
  scoped_override& operator=(const scoped_override&) = delete;

 private:
  const table* previous_;
};

/// The real system calls.
[[nodiscard]] const table& real() noexcept;

/// An `io` error with errno's text: "<what>: <strerror>".
[[nodiscard]] error io_error(const std::string& what, int err, const std::string& path);

/// The error for a path holding a NUL byte, which every system call would cut short there.
[[nodiscard]] error nul_in_path(const std::string& path);
/// open(2), retrying EINTR; a path with a NUL byte is refused (nul_in_path).
[[nodiscard]] result<int> open_file(const std::string& path, int flags, mode_t mode = 0);
/// Closes, ignoring errors (for cleanup paths).
void close_quietly(int fd) noexcept;
/// Opens `path` read-only for reads by offset. A named pipe or a socket cannot be read so: it
/// is refused at once, saying so, instead of the open waiting for a writer that may never come.
/// `as_what` completes "a pipe cannot be read ..." (empty: nothing).
[[nodiscard]] result<int> open_for_offset_reads(const std::string& path, std::string_view as_what = "as SafeTensors");
/// "pipe", "socket", "character device", "block device" or "special file".
[[nodiscard]] std::string_view special_file_kind(mode_t mode) noexcept;
/// The error for a pipe or socket read by offset, naming what it is.
[[nodiscard]] error not_readable_by_offset(mode_t mode, const std::string& path,
                                           std::string_view as_what = "as SafeTensors");

/// Owns a descriptor and closes it quietly on destruction.
class unique_fd {
 public:
  explicit unique_fd(int fd) noexcept : fd_(fd) {}
  unique_fd(const unique_fd&) = delete;
  unique_fd& operator=(const unique_fd&) = delete;
  ~unique_fd() { close_quietly(fd_); }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_;
};

/// Permission bits (with setuid/setgid/sticky) of the regular file at `path`; nullopt
/// when there is none.
[[nodiscard]] std::optional<mode_t> permissions_of(const std::string& path);
/// fchmod(2): gives a replacement the permissions of the file it replaces.
[[nodiscard]] status set_permissions(int fd, mode_t mode, const std::string& path);

/// File size of an open descriptor; also rejects directories.
[[nodiscard]] result<std::uint64_t> file_size(int fd, const std::string& path);
/// Reads exactly `n` bytes at `offset`; a file that ends early is an error naming the offset.
[[nodiscard]] status pread_exact(int fd, void* buf, std::size_t n, std::uint64_t offset, const std::string& path);
/// A failed write's error: "write failed at byte <offset>: <strerror>", with the offset.
[[nodiscard]] error write_failed(std::uint64_t offset, int err, const std::string& path);
/// Writes all `n` bytes at `offset`.
[[nodiscard]] status pwrite_all(int fd, const void* buf, std::size_t n, std::uint64_t offset, const std::string& path);

}  // namespace safetensors::detail::sys
