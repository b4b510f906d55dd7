// SPDX-License-Identifier: Apache-2.0
// Turning "header too large" on a file that was never SafeTensors into what a user can act on.
#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "platform/sys.h"
#include "safetensors/sniff.h"

namespace safetensors {
namespace {

/// The length-prefix errors: what any non-SafeTensors file runs into first. (JSON errors are
/// left alone: the same codes describe a bad config.json or index, whose text is meant.)
bool is_length_prefix_error(error_code c) {
  return c == error_code::header_too_small || c == error_code::header_too_large ||
         c == error_code::invalid_header_length;
}

/// Up to sniff_prefix_bytes from the start of a regular file; empty when unreadable.
std::size_t read_prefix(const std::string& path, std::span<std::byte> into) {
  auto fd = detail::sys::open_file(path, O_RDONLY | O_CLOEXEC);
  if (!fd) return 0;
  const detail::sys::unique_fd owner(*fd);
  std::size_t got = 0;
  while (got < into.size()) {
    const ssize_t n = detail::sys::current().pread(*fd, into.data() + got, into.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  return got;
}

std::string_view kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "pipe";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

error replaced(error e, std::string message) {
  e.message = std::move(message);
  e.offset.reset();
  return e;
}

}  // namespace

error explain_format_error(error e) {
  if (!is_length_prefix_error(e.code) || e.path.empty()) return e;
  struct stat st {};
  if (::stat(e.path.c_str(), &st) != 0) return e;
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    return replaced(std::move(e), fmt::format("a {} cannot be read as SafeTensors (it is read by offset): save it to "
                                              "a file first",
                                              kind_of(st.st_mode)));
  }
  if (!S_ISREG(st.st_mode)) {
    return replaced(std::move(e), fmt::format("not a SafeTensors file: this is a {}", kind_of(st.st_mode)));
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == 0) return replaced(std::move(e), "empty file (0 bytes), not a SafeTensors file");
  std::array<std::byte, sniff_prefix_bytes> bytes{};
  const std::span<const std::byte> prefix(bytes.data(), read_prefix(e.path, bytes));
  const file_format format = sniff_format(prefix);
  if (format != file_format::safetensors && format != file_format::unknown) {
    e.tensor.reset();
    return replaced(std::move(e), fmt::format("this is a {} file, not SafeTensors", file_format_name(format)));
  }
  if (prefix.size() < 8) {
    return replaced(std::move(e),
                    fmt::format("not a SafeTensors file: {} byte{}, shorter than the 8-byte length prefix", size,
                                size == 1 ? "" : "s"));
  }
  std::uint64_t n = 0;
  for (std::size_t i = 8; i-- > 0;) n = (n << 8) | std::to_integer<std::uint64_t>(prefix[i]);
  if (format == file_format::unknown) {
    const std::string why = e.code == error_code::header_too_large ? std::string("over the header size limit")
                                                                   : fmt::format("more than the file's {} bytes", size);
    return replaced(
        std::move(e),
        fmt::format("not a SafeTensors file: its first 8 bytes read as a header length of {} bytes, {}", n, why));
  }
  // A SafeTensors start whose header runs past the end: the download or copy was cut short.
  if (e.code == error_code::invalid_header_length) {
    e.message = fmt::format("file is truncated: the header needs {} bytes after the length prefix, the file has {}", n,
                            size - 8);
  }
  return e;
}

}  // namespace safetensors
