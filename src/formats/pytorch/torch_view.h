// SPDX-License-Identifier: Apache-2.0
// Internal: a tensor's bytes out of its storage, contiguous and little-endian.
#pragma once

#include <cstddef>
#include <functional>
#include <span>

#include "safetensors/formats/pytorch.h"

namespace safetensors::torch::detail {

/// Gathers the view `t` of `storage` (already bounds-checked) in C order and passes it
/// to `sink` in chunks of at most `chunk_bytes`, byteswapping each `swap_bytes`-wide unit
/// (1: no swap). A contiguous view that needs no swap goes straight from `storage`.
[[nodiscard]] status copy_view(std::span<const std::byte> storage, const tensor& t, std::size_t swap_bytes,
                               std::size_t chunk_bytes, const chunk_sink& sink);

/// Reverses each `unit`-byte group of `data` in place (unit <= 1: nothing to do).
void swap_in_place(std::span<std::byte> data, std::size_t unit) noexcept;

/// The byteswap unit of `t` when its storage is big-endian (complex: each half).
[[nodiscard]] std::size_t swap_unit(dtype t) noexcept;

}  // namespace safetensors::torch::detail
