// SPDX-License-Identifier: Apache-2.0
/// \file checkpoint_index.h
/// The index of a sharded checkpoint (`model.safetensors.index.json`, and PyTorch's
/// `pytorch_model.bin.index.json`, which has the same schema): parsed without I/O or read
/// under a size cap, and the confinement of shard names to the index's directory.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/header.h"

namespace safetensors {

struct checkpoint_index {
  metadata_map metadata;  ///< strings verbatim, other values as their JSON text
  std::optional<std::uint64_t> total_size;
  std::vector<std::pair<std::string, std::string>> weight_map;  ///< (tensor, shard), sorted by tensor
};

/// Parses index JSON. Errors: InvalidIndex (syntax, schema), DuplicateKey (any level).
[[nodiscard]] result<checkpoint_index> parse_checkpoint_index(std::span<const std::byte> json);

/// Reads and parses an index file of at most `max_bytes`. Errors carry `path`.
[[nodiscard]] result<checkpoint_index> read_checkpoint_index(const std::string& path, std::uint64_t max_bytes);

/// The checks on a shard name that need no filesystem: empty, NUL, absolute, backslash,
/// drive letter, `..` component. Errors: UnsafePath.
[[nodiscard]] status check_shard_name(std::string_view name);

/// Checks a shard name and returns `directory/name`. Errors: UnsafePath.
[[nodiscard]] result<std::string> confined_shard_path(const std::string& directory, std::string_view name);

}  // namespace safetensors
