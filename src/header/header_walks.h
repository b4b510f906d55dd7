// SPDX-License-Identifier: Apache-2.0
// Internal: choosing the schema walk behind parse_header, for the differential fuzz target.
#pragma once

#include <cstdint>
#include <span>

#include "safetensors/header.h"

namespace safetensors::detail {

/// The walks parse_header can run. The public functions try the On-Demand single pass
/// (ondemand_walk.h) and fall back to the DOM walk when it declines; the DOM walk alone is
/// the reference the fast path is held to.
enum class header_walk : std::uint8_t { ondemand_then_dom, dom_only };

/// parse_header with the calling thread's parsers and the given walk; `padded` as for
/// parse_header_padded.
[[nodiscard]] result<header> parse_header_with(header_walk walk, std::span<const std::byte> header_json,
                                               std::uint64_t file_size, const parse_options& options, bool padded);

/// parse_file_bytes with the calling thread's parsers and the given walk.
[[nodiscard]] result<header> parse_file_bytes_with(header_walk walk, std::span<const std::byte> file,
                                                   const parse_options& options);

}  // namespace safetensors::detail
