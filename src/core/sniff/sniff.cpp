// SPDX-License-Identifier: Apache-2.0
// Magic-byte classification of model files (see notes on related formats).
#include "safetensors/sniff.h"

#include <fcntl.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>

#include "platform/sys.h"

namespace safetensors {
namespace {

bool starts_with(std::span<const std::byte> bytes, std::string_view magic) noexcept {
  return bytes.size() >= magic.size() && std::memcmp(bytes.data(), magic.data(), magic.size()) == 0;
}

std::uint64_t read_le(std::span<const std::byte> bytes, std::size_t at, std::size_t width) noexcept {
  std::uint64_t v = 0;
  for (std::size_t i = 0; i < width; ++i) v |= std::to_integer<std::uint64_t>(bytes[at + i]) << (8 * i);
  return v;
}

/// Zip: look at the first local header's member name (offset 30, length at 26).
file_format classify_zip(std::span<const std::byte> bytes) noexcept {
  if (bytes.size() < 30) return file_format::zip;
  const auto name_len = static_cast<std::size_t>(read_le(bytes, 26, 2));
  const std::size_t available = std::min(name_len, bytes.size() - 30);
  std::string_view name(reinterpret_cast<const char*>(bytes.data() + 30), available);
  if (available == name_len && name.size() >= 4 && name.substr(name.size() - 4) == ".npy") return file_format::npz;
  if (name.find('/') != std::string_view::npos) return file_format::pytorch_zip;
  return file_format::zip;
}

}  // namespace

file_format sniff_format(std::span<const std::byte> prefix) noexcept {
  if (starts_with(prefix, "GGUF")) return file_format::gguf;
  if (starts_with(prefix, "PK\x03\x04") || starts_with(prefix, "PK\x05\x06")) return classify_zip(prefix);
  if (starts_with(prefix, "\x93NUMPY")) return file_format::npy;
  if (starts_with(prefix, "\x89HDF\r\n\x1a\n")) return file_format::hdf5;
  // Pickle PROTO opcode 0x80 with protocol 2..5. A length prefix can start with the same
  // two bytes, so the SafeTensors shape (N, then '{') is checked first.
  const bool pickle_like = prefix.size() >= 2 && prefix[0] == std::byte{0x80} &&
                           std::to_integer<unsigned>(prefix[1]) >= 2 && std::to_integer<unsigned>(prefix[1]) <= 5;
  if (prefix.size() >= 9) {
    const std::uint64_t n = read_le(prefix, 0, 8);
    // Header text starts at byte 8: JSON may begin with whitespace.
    std::size_t i = 8;
    while (i < prefix.size() && i - 8 < n &&
           (prefix[i] == std::byte{' '} || prefix[i] == std::byte{'\n'} || prefix[i] == std::byte{'\r'} ||
            prefix[i] == std::byte{'\t'})) {
      ++i;
    }
    if (n >= 2 && i < prefix.size() && prefix[i] == std::byte{'{'}) return file_format::safetensors;
  }
  // A protocol-1 pickle has no PROTO opcode: legacy torch.save starts with its magic
  // number as a decimal LONG.
  if (pickle_like || starts_with(prefix, "L119547037146038801333356L\n")) return file_format::pickle;
  return file_format::unknown;
}

result<file_format> sniff_file(const std::string& path) {
  // Every reader of every format reads by offset: a pipe is refused here rather than waited on.
  auto fd = detail::sys::open_for_offset_reads(path, "");
  if (!fd) return std::move(fd).err();
  std::array<std::byte, sniff_prefix_bytes> prefix{};
  std::size_t got = 0;
  for (;;) {
    const ssize_t n = detail::sys::current().read(*fd, prefix.data() + got, prefix.size() - got);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) {
      const int err = errno;
      detail::sys::close_quietly(*fd);
      return detail::sys::io_error("read failed", err, path);
    }
    if (n == 0) break;
    got += static_cast<std::size_t>(n);
    if (got == prefix.size()) break;
  }
  detail::sys::close_quietly(*fd);
  return sniff_format(std::span<const std::byte>(prefix.data(), got));
}

std::string_view file_format_name(file_format f) noexcept {
  switch (f) {
    case file_format::safetensors: return "SafeTensors";
    case file_format::gguf: return "GGUF";
    case file_format::pytorch_zip: return "PyTorch (zip)";
    case file_format::npz: return "NumPy .npz";
    case file_format::zip: return "zip";
    case file_format::pickle: return "pickle";
    case file_format::npy: return "NumPy .npy";
    case file_format::hdf5: return "HDF5";
    case file_format::unknown: return "unknown";
  }
  return "unknown";
}

}  // namespace safetensors
