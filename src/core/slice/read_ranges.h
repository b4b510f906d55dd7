// SPDX-License-Identifier: Apache-2.0
// Internal: copying a list of file ranges back to back into memory, shared by
// read_slice and the loader.
#pragma once

#include <cstddef>
#include <span>

#include "safetensors/file.h"
#include "safetensors/slice.h"

namespace safetensors::detail {

/// `destination` must hold exactly the sum of the ranges' lengths.
[[nodiscard]] status read_ranges(const file& f, std::span<const byte_range> ranges, std::span<std::byte> destination);

}  // namespace safetensors::detail
