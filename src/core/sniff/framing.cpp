// SPDX-License-Identifier: Apache-2.0
// The framing verdict's words, from a source's first bytes and size alone (no I/O), so a file,
// a buffer, a Python stream and a URL read the same: read_header_length words its errors here.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <string>

#include <fmt/format.h>

#include "safetensors/sniff.h"
#include "sniff/framing_words.h"

namespace safetensors {

error explain_framing_error(error e, std::span<const std::byte> prefix, std::uint64_t size) {
  if (!detail::is_length_prefix_error(e.code)) return e;
  if (size == 0) return detail::with_message(std::move(e), "empty file (0 bytes), not a SafeTensors file");
  // Telling a SafeTensors start from anything else needs the byte after the length prefix.
  if (prefix.size() < std::min<std::uint64_t>(size, 9)) return e;
  const file_format format = sniff_format(prefix);
  if (format != file_format::safetensors && format != file_format::unknown) {
    e.tensor.reset();
    return detail::with_message(std::move(e),
                                fmt::format("this is a {} file, not SafeTensors", file_format_name(format)));
  }
  if (size < 8) {
    return detail::with_message(
        std::move(e), fmt::format("not a SafeTensors file: {} byte{}, shorter than the 8-byte length prefix", size,
                                  size == 1 ? "" : "s"));
  }
  std::uint64_t n = 0;
  for (std::size_t i = 8; i-- > 0;) n = (n << 8) | std::to_integer<std::uint64_t>(prefix[i]);
  if (format == file_format::unknown) {
    const std::string why = e.code == error_code::header_too_large ? std::string("over the header size limit")
                                                                   : fmt::format("more than the file's {} bytes", size);
    return detail::with_message(
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
