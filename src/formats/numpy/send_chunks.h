// SPDX-License-Identifier: Apache-2.0
// Internal: an array already whole in memory handed to a chunk_sink in pieces, as the
// streamed paths hand theirs.
#pragma once

#include <algorithm>
#include <cstddef>
#include <span>

#include "safetensors/chunk_sink.h"
#include "safetensors/error.h"

namespace safetensors::numpy::detail {

/// Passes `bytes` to `sink` in order, in pieces of at most `chunk_bytes` (> 0); stops at the
/// first error the sink returns.
[[nodiscard]] inline status send_chunks(std::span<const std::byte> bytes, std::size_t chunk_bytes,
                                        const chunk_sink& sink) {
  for (std::size_t at = 0; at < bytes.size(); at += chunk_bytes) {
    if (auto ok = sink(bytes.subspan(at, std::min(chunk_bytes, bytes.size() - at))); !ok) return ok;
  }
  return {};
}

}  // namespace safetensors::numpy::detail
