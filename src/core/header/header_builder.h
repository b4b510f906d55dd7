// SPDX-License-Identifier: Apache-2.0
// Internal: collects tensor entries while the JSON is walked, then moves them into a
// `header` with its name and shape arenas, and runs the offset checks (stages 6-7).
#pragma once

#include <span>
#include <string_view>
#include <vector>

#include "safetensors/header.h"

namespace safetensors::detail {

struct header_builder {
  /// Entries in JSON order. Until `finish`, names point into the parser's memory and each
  /// shape's pointer may be stale (`dims` may have grown since): only its size counts.
  array<tensor_info> tensors;
  array<std::uint64_t> dims;  // every shape, in entry order
  std::optional<metadata_map> metadata;

  /// Reserves for every entry `json_bytes` of JSON can hold (the shortest entry,
  /// `"":{"dtype":"U8","shape":[],"data_offsets":[0,0]}`, is 50 bytes), so the fast walks
  /// never reallocate; pages past the last entry stay untouched.
  void reserve_for(std::size_t json_bytes) {
    const std::size_t most_entries = json_bytes / 50 + 1;
    tensors.reserve(most_entries);
    dims.reserve(2 * most_entries);
  }

  /// Fills `spare`'s arrays (emptied, their capacity kept) instead of fresh ones; `spare`
  /// must outlive `finish`.
  void reuse(header& spare) noexcept;

  /// Copies names into the arena, points shapes into `dims`, rejects duplicate names, then validates offsets and
  /// the end of file. `header_length` is N; `file_size` the whole file's size.
  [[nodiscard]] result<header> finish(std::uint64_t header_length, std::uint64_t file_size, validation_policy policy);

 private:
  header* spare_ = nullptr;
};

/// simdjson::SIMDJSON_PADDING: how many readable bytes parse_header_padded needs after the JSON.
inline constexpr std::size_t json_padding = 64;

/// parse_header for JSON followed by at least `json_padding` readable bytes of any content: the parser reads them in
/// place instead of copying the JSON.
[[nodiscard]] result<header> parse_header_padded(std::span<const std::byte> header_json, std::uint64_t file_size,
                                                 const parse_options& options);

}  // namespace safetensors::detail
