// SPDX-License-Identifier: Apache-2.0
// Internal: small helpers over simdjson's DOM shared by the header parser and the MLX
// config reader.
#pragma once

#include <optional>
#include <string_view>

#include <simdjson.h>

namespace safetensors::detail {

/// The key that two entries of `obj` share, if any. Keys are already unescaped.
[[nodiscard]] std::optional<std::string_view> find_duplicate_key(simdjson::dom::object obj);

}  // namespace safetensors::detail
