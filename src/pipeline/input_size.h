// SPDX-License-Identifier: Apache-2.0
// Internal: the size of an input file, for the output budget (tensor_source::input_bytes).
#pragma once

#include <cstdint>
#include <filesystem>
#include <string>

namespace safetensors::pipeline::detail {

/// The size of the file at `path`; 0 when it cannot be told (the open that follows fails).
[[nodiscard]] inline std::uint64_t file_bytes(const std::string& path) {
  std::error_code ec;
  const std::uintmax_t size = std::filesystem::file_size(path, ec);
  return ec ? 0 : static_cast<std::uint64_t>(size);
}

}  // namespace safetensors::pipeline::detail
