// SPDX-License-Identifier: Apache-2.0
/// \file sniff.h
/// Telling file formats apart by their first bytes, so a tool handed a GGUF, PyTorch,
/// pickle or NumPy file can say so instead of reporting a meaningless header error.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "safetensors/error.h"

namespace safetensors {

enum class file_format : std::uint8_t {
  safetensors,  ///< plausible length prefix followed by '{' (not a validity verdict)
  gguf,         ///< "GGUF"
  pytorch_zip,  ///< zip whose first member sits in a folder (torch.save since 1.6)
  npz,          ///< zip whose first member ends in ".npy"
  zip,          ///< any other zip
  pickle,       ///< pickle protocol 2-5 (legacy torch.save, .ckpt, .pkl)
  npy,          ///< "\x93NUMPY"
  hdf5,         ///< "\x89HDF\r\n\x1a\n" (Keras .h5)
  unknown,
};

/// The bytes sniff_format wants to see (fewer is fine; short files sniff as unknown).
inline constexpr std::size_t sniff_prefix_bytes = 512;

/// Classifies a file from its first bytes (up to sniff_prefix_bytes).
[[nodiscard]] file_format sniff_format(std::span<const std::byte> prefix) noexcept;

/// Reads the first bytes of `path` and classifies them. Errors: IoError.
[[nodiscard]] result<file_format> sniff_file(const std::string& path);

/// The framing verdict's words, the same for files, buffers, handles and URLs: when `e` is a
/// length-prefix error (HeaderTooSmall, HeaderTooLarge, InvalidHeaderLength) about a source
/// of `size` bytes whose first bytes are `prefix` (sniff_prefix_bytes of them, or the whole
/// source when it is shorter), says what the source really is, keeping the code and path:
///   "empty file (0 bytes), not a SafeTensors file"
///   "this is a GGUF file, not SafeTensors"
///   "not a SafeTensors file: 3 bytes, shorter than the 8-byte length prefix"
///   "not a SafeTensors file: its first 8 bytes read as a header length of N bytes, ..."
///   "file is truncated: the header needs N bytes after the length prefix, the file has M"
/// read_header_length words its errors with it. Every other error, and one whose prefix is
/// too short to tell (under 9 bytes of a longer source), is returned unchanged.
[[nodiscard]] error explain_framing_error(error e, std::span<const std::byte> prefix, std::uint64_t size);

/// When `e` is a length-prefix error (HeaderTooSmall, HeaderTooLarge, InvalidHeaderLength)
/// about the file `e.path`, looks at that file (stat, then its first bytes; never opens a
/// pipe) and says what it really is, keeping the code and path:
///   "this is a GGUF file, not SafeTensors"
///   "not a SafeTensors file: its first 8 bytes read as a header length of N bytes, ..."
///   "a pipe cannot be read as SafeTensors (it is read by offset): save it to a file first"
///   "not a SafeTensors file: this is a directory"
/// and, for a regular file, explain_framing_error's words over its first bytes.
/// Every other error is returned unchanged.
[[nodiscard]] error explain_format_error(error e);

/// Human name: "SafeTensors", "GGUF", "PyTorch (zip)", "NumPy .npz", "zip", "pickle",
/// "NumPy .npy", "HDF5", "unknown".
[[nodiscard]] std::string_view file_format_name(file_format f) noexcept;

}  // namespace safetensors
