// SPDX-License-Identifier: Apache-2.0
// Internal: collects tensor entries while the JSON is walked, then moves them into a
// `header` with its name and shape arenas, and runs the offset checks (stages 6-7).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "safetensors/header.h"

namespace safetensors {

/// One entry as met in the JSON; `name` points into the parser's memory until `finish`.
struct raw_entry {
  std::string_view name;
  dtype type = dtype::U8;
  std::size_t dims_at = 0;  // index into header_builder::dims
  std::size_t rank = 0;
  std::uint64_t begin = 0;
  std::uint64_t end = 0;
};

struct header_builder {
  std::vector<raw_entry> entries;
  std::vector<std::uint64_t> dims;
  std::optional<metadata_map> metadata;

  /// Copies names into the arena, rejects duplicate names, then validates offsets and
  /// the end of file. `header_length` is N; `file_size` the whole file's size.
  [[nodiscard]] result<header> finish(std::uint64_t header_length, std::uint64_t file_size,
                                      validation_policy policy);
};

/// simdjson::SIMDJSON_PADDING: how many readable bytes parse_header_padded needs after the JSON.
inline constexpr std::size_t json_padding = 64;

/// parse_header for JSON followed by at least `json_padding` readable bytes of any content: the parser reads them in place instead of copying the JSON.
[[nodiscard]] result<header> parse_header_padded(std::span<const std::byte> header_json, std::uint64_t file_size,
                                                 const parse_options& options);

}  // namespace safetensors
