// SPDX-License-Identifier: Apache-2.0
// Turning "header too large" on a path that was never a SafeTensors file into what a user can act
// on: a pipe, a directory, or (framing.cpp) what its first bytes are.
#include <fcntl.h>
#include <sys/stat.h>

#include <array>
#include <cstddef>
#include <cstdint>

#include <fmt/format.h>

#include "platform/sys.h"
#include "safetensors/sniff.h"
#include "sniff/framing_words.h"

namespace safetensors {
namespace {

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

}  // namespace

error explain_format_error(error e) {
  if (!detail::is_length_prefix_error(e.code) || e.path.empty()) return e;
  struct stat st {};
  if (::stat(e.path.c_str(), &st) != 0) return e;
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    std::string message = detail::sys::not_readable_by_offset(st.st_mode, e.path).message;
    return detail::with_message(std::move(e), std::move(message));
  }
  if (!S_ISREG(st.st_mode)) {
    return detail::with_message(
        std::move(e), fmt::format("not a SafeTensors file: this is a {}", detail::sys::special_file_kind(st.st_mode)));
  }
  std::array<std::byte, sniff_prefix_bytes> bytes{};
  const std::span<const std::byte> prefix(bytes.data(), read_prefix(e.path, bytes));
  return explain_framing_error(std::move(e), prefix, static_cast<std::uint64_t>(st.st_size));
}

}  // namespace safetensors
