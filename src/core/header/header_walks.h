// SPDX-License-Identifier: Apache-2.0
// Internal: choosing the schema walk behind parse_header, for the differential fuzz target.
#pragma once

#include <cstdint>
#include <span>

#include "safetensors/header.h"

namespace safetensors::detail {

/// The walks parse_header can run. The public functions try the schema scan
/// (plain_scan.h), then the On-Demand single pass (ondemand_walk.h), each handing the
/// header to the next when it declines, and the DOM walk last; the DOM walk alone is the
/// reference both fast paths are held to.
enum class header_walk : std::uint8_t { scan_then_ondemand_then_dom, ondemand_then_dom, dom_only };

/// parse_header with the calling thread's parsers and the given walk; `padded` as for
/// parse_header_padded.
[[nodiscard]] result<header> parse_header_with(header_walk walk, std::span<const std::byte> header_json,
                                               std::uint64_t file_size, const parse_options& options, bool padded);

/// parse_file_bytes with the calling thread's parsers and the given walk.
[[nodiscard]] result<header> parse_file_bytes_with(header_walk walk, std::span<const std::byte> file,
                                                   const parse_options& options);

}  // namespace safetensors::detail
