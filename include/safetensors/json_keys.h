// SPDX-License-Identifier: Apache-2.0
/// \file json_keys.h
/// Duplicate keys in JSON text. serde_json, which the reference implementation uses, refuses
/// an object that names a key twice; most JSON parsers keep one of the two values silently.
/// The library refuses them in headers, indexes and plans; readers of other JSON files that
/// belong to a checkpoint (an MLX config.json) check with this.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "safetensors/error.h"

namespace safetensors {

/// The first key that some object of `json` (at any depth, inside arrays too) names twice,
/// compared after unescaping, or none. Errors: InvalidHeaderDeserialization when `json` is not
/// JSON (simdjson's reason in the message).
[[nodiscard]] result<std::optional<std::string>> find_duplicate_json_key(std::string_view json);

}  // namespace safetensors
