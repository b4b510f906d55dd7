// SPDX-License-Identifier: Apache-2.0
// Internal: the zip container of
// torch.save (>= 1.6): <dir>/data.pkl, <dir>/data/<key>, <dir>/byteorder.
#pragma once

#include <cstddef>
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "safetensors/formats/pickle.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/readonly_file.h"

namespace safetensors::detail {
class zip_reader;
}  // namespace safetensors::detail

namespace safetensors::torch::detail {

/// Where each storage's bytes are: a range of the file (read with pread, never mapped, so
/// converting does not pull the whole input into memory), or else a compressed zip member.
struct storage_source {
  std::vector<std::uint64_t> file_offset;                ///< where the storage starts in the file (empty member)
  std::vector<std::string> member;                       ///< zip member name of a compressed storage
  std::shared_ptr<safetensors::detail::zip_reader> zip;  ///< for compressed members
};

struct torch_zip_checkpoint {
  pickle_document object;
  bool big_endian = false;
  storage_source source;
};

[[nodiscard]] bool looks_like_zip(std::span<const std::byte> file) noexcept;

/// Reads the zip container: finds the one top-level folder, unpickles data.pkl, reads
/// byteorder, and pairs each storage with its member (whose size must match). What data.pkl
/// names outside the allowlist goes to `verdict`, also when it is refused.
[[nodiscard]] result<torch_zip_checkpoint> open_torch_zip(std::uint64_t file_size, const std::string& path,
                                                          const open_options& options, pickle_verdict& verdict);

/// Inflates compressed storage `index` (`byte_size` long) into `buffer`.
[[nodiscard]] status inflate_storage(const storage_source& source, std::size_t index, std::uint64_t byte_size,
                                     std::vector<std::byte>& buffer);

}  // namespace safetensors::torch::detail
