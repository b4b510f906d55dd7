// SPDX-License-Identifier: Apache-2.0
#include "input_diagnosis.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <array>
#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <vector>

#include <fmt/format.h>

#include "safetensors/json_text.h"
#include "safetensors/sniff.h"

namespace st_cli {
namespace {

using safetensors::error_code;

/// The length-prefix errors: what any non-SafeTensors file runs into first. (JSON errors are
/// left alone: the same codes describe a bad config.json or index, whose text is meant.)
bool is_length_prefix_error(error_code c) {
  return c == error_code::header_too_small || c == error_code::header_too_large ||
         c == error_code::invalid_header_length;
}

/// Up to sniff_prefix_bytes from the start of a regular file; empty when unreadable.
std::vector<std::byte> read_prefix(const std::string& path) {
  std::vector<std::byte> bytes(safetensors::sniff_prefix_bytes);
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return {};
  std::size_t got = 0;
  while (got < bytes.size()) {
    const ssize_t n = ::pread(fd, bytes.data() + got, bytes.size() - got, static_cast<off_t>(got));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    got += static_cast<std::size_t>(n);
  }
  ::close(fd);
  bytes.resize(got);
  return bytes;
}

std::uint64_t length_prefix(const std::vector<std::byte>& bytes) {
  std::uint64_t n = 0;
  for (std::size_t i = 8; i-- > 0;) n = (n << 8) | std::to_integer<std::uint64_t>(bytes[i]);
  return n;
}

std::string_view kind_of(mode_t mode) {
  if (S_ISFIFO(mode)) return "pipe";
  if (S_ISSOCK(mode)) return "socket";
  if (S_ISCHR(mode)) return "character device";
  if (S_ISBLK(mode)) return "block device";
  return "special file";
}

}  // namespace

safetensors::error explain_input_error(safetensors::error e) {
  if (!is_length_prefix_error(e.code) || e.path.empty()) return e;
  struct stat st {};
  if (::stat(e.path.c_str(), &st) != 0) return e;
  if (S_ISFIFO(st.st_mode) || S_ISSOCK(st.st_mode)) {
    e.message = fmt::format("a {} cannot be read as SafeTensors (it is read by offset): save it to a file first",
                            kind_of(st.st_mode));
    e.offset.reset();
    return e;
  }
  if (!S_ISREG(st.st_mode)) {
    e.message = fmt::format("not a SafeTensors file: this is a {}", kind_of(st.st_mode));
    e.offset.reset();
    return e;
  }
  const auto size = static_cast<std::uint64_t>(st.st_size);
  if (size == 0) {
    e.message = "empty file (0 bytes), not a SafeTensors file";
    e.offset.reset();
    return e;
  }
  const std::vector<std::byte> prefix = read_prefix(e.path);
  const safetensors::file_format format = safetensors::sniff_format(prefix);
  if (format != safetensors::file_format::safetensors && format != safetensors::file_format::unknown) {
    e.message = fmt::format("this is a {} file, not SafeTensors", safetensors::file_format_name(format));
    e.offset.reset();
    e.tensor.reset();
    return e;
  }
  if (prefix.size() < 8) {
    e.message = fmt::format("not a SafeTensors file: {} byte{}, shorter than the 8-byte length prefix", size,
                            size == 1 ? "" : "s");
    e.offset.reset();
    return e;
  }
  const std::uint64_t n = length_prefix(prefix);
  if (format == safetensors::file_format::unknown) {
    std::string why;
    if (e.code == error_code::header_too_large) {
      why = "over the header size limit";
    } else {
      why = fmt::format("more than the file's {} bytes", size);
    }
    e.message =
        fmt::format("not a SafeTensors file: its first 8 bytes read as a header length of {} bytes, {}", n, why);
    e.offset.reset();
    return e;
  }
  // A SafeTensors start whose header runs past the end: the download or copy was cut short.
  if (e.code == error_code::invalid_header_length) {
    e.message = fmt::format("file is truncated: the header needs {} bytes after the length prefix, the file has {}", n,
                            size - 8);
  }
  return e;
}

}  // namespace st_cli

namespace st_cli {

std::string problem_line(const safetensors::error& e, const std::string& path) {
  safetensors::error shown = explain_input_error(e);
  const std::string file = shown.path.empty() ? path : shown.path;
  shown.path.clear();
  return fmt::format("{}: {}: {}", file, safetensors::error_code_name(shown.code), shown.to_string());
}

std::string problem_json(const safetensors::error& e, const std::string& path) {
  const safetensors::error shown = explain_input_error(e);
  return fmt::format(R"({{"file":{},"code":"{}","message":{},"offset":{},"tensor":{}}})",
                     safetensors::json_quote(shown.path.empty() ? path : shown.path),
                     safetensors::error_code_name(shown.code), safetensors::json_quote(shown.message),
                     shown.offset ? std::to_string(*shown.offset) : "null",
                     shown.tensor ? safetensors::json_quote(*shown.tensor) : "null");
}

}  // namespace st_cli
