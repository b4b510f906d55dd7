// SPDX-License-Identifier: Apache-2.0
// A NumPy file's bytes mapped on first use: opening an .npy or .npz reads only the
// preambles (by pread), and the file is mapped when an array's data is first wanted. So
// describing a file of many GB (`inspect`; the browser, which reads it by ranges) never maps
// or reads it whole.
#pragma once

#include <mutex>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "safetensors/formats/npy.h"
#include "safetensors/readonly_file.h"

namespace safetensors::numpy::detail {

class lazy_mapping {
 public:
  explicit lazy_mapping(readonly_file file) noexcept : file_(std::move(file)) {}

  [[nodiscard]] const readonly_file& file() const noexcept { return file_; }

  /// The whole file, mapped by the first call (thread-safe). Errors: the mapping's, every time.
  [[nodiscard]] result<std::span<const std::byte>> bytes() const {
    std::call_once(once_, [this] {
      auto mapped = file_.map();
      if (mapped) {
        mapping_ = std::move(mapped).value();
      } else {
        error_ = std::move(mapped).err();
      }
    });
    if (error_) return *error_;
    return mapping_.bytes();
  }

 private:
  readonly_file file_;
  mutable std::once_flag once_;
  mutable readonly_mapping mapping_;
  mutable std::optional<error> error_;
};

/// The .npy preamble at `offset` of `file` (at most `available` bytes there): its first
/// npy_prefix_bytes, then as many as its header length says (all of `available` when shorter,
/// so that parse_npy_header words the truncation as it would over the whole file).
[[nodiscard]] inline result<std::vector<std::byte>> read_npy_preamble(const readonly_file& file, std::uint64_t offset,
                                                                      std::uint64_t available,
                                                                      const npy_options& options) {
  std::vector<std::byte> bytes(static_cast<std::size_t>(std::min<std::uint64_t>(available, npy_prefix_bytes)));
  if (auto s = file.read_at(offset, bytes); !s) return std::move(s).err();
  if (bytes.size() < npy_prefix_bytes) return bytes;
  auto total = npy_preamble_size(bytes, options);
  if (!total) return bytes;  // parse_npy_header gives the same error from these bytes
  const auto have = bytes.size();
  bytes.resize(static_cast<std::size_t>(std::min(available, *total)));
  // A preamble that says it is shorter than its own prefix (a hostile length) was read whole already.
  if (bytes.size() <= have) return bytes;
  if (auto s = file.read_at(offset + have, std::span(bytes).subspan(have)); !s) return std::move(s).err();
  return bytes;
}

}  // namespace safetensors::numpy::detail
