// SPDX-License-Identifier: Apache-2.0
// Internal: duplicate-key detection over simdjson DOM objects, shared by the header
// parser and the checkpoint index parser. Keys are compared after unescaping.
#pragma once

#include <optional>
#include <string_view>

#include <simdjson.h>

namespace safetensors::detail {

/// A key that two members of `obj` share, if any.
[[nodiscard]] std::optional<std::string_view> find_duplicate_key(simdjson::dom::object obj);

/// The first duplicate key in any object inside `value`, at any depth (arrays included).
/// Depth is bounded by the parser's nesting limit.
[[nodiscard]] std::optional<std::string_view> find_duplicate_key_deep(simdjson::dom::element value);

}  // namespace safetensors::detail
