// SPDX-License-Identifier: Apache-2.0
// Internal: the pre-1.6 torch.save container, a sequence of pickles then raw storages:
//   pickle(magic 0x1950a86a20f9469cfc6c) pickle(protocol 1001) pickle(sys_info dict)
//   pickle(object) pickle([storage keys]) then per key: u64 element count, bytes.
#pragma once

#include <cstdint>
#include <span>
#include <vector>

#include "safetensors/formats/pickle.h"

namespace safetensors::torch::detail {

struct legacy_checkpoint {
  pickle_document object;
  bool big_endian = false;
  std::vector<std::uint64_t> storage_offsets;  ///< per object.storages(): file offset of its bytes
};

/// True when `file` starts like a legacy checkpoint (the magic-number pickle).
[[nodiscard]] bool looks_like_legacy_checkpoint(std::span<const std::byte> file) noexcept;

/// Errors carry no path; offsets are file offsets. What any of its pickles names outside the
/// allowlist goes to `verdict`, also when the file is refused.
[[nodiscard]] result<legacy_checkpoint> read_legacy_checkpoint(std::span<const std::byte> file,
                                                               const pickle_limits& limits, pickle_verdict& verdict);

}  // namespace safetensors::torch::detail
