// SPDX-License-Identifier: Apache-2.0
/// \file glob.h
/// Shell-style patterns for selecting tensors by name.
#pragma once

#include <string_view>

namespace safetensors {

/// True when `pattern` matches all of `text`: `*` any run of bytes (dots included, so
/// `model.layers.*.weight` spans one or more levels), `?` one byte, `[abc]` / `[a-z]` /
/// `[!a-z]` one byte of a set, `\x` a literal x. Runs in O(|pattern| x |text|) time.
[[nodiscard]] bool glob_match(std::string_view pattern, std::string_view text) noexcept;

/// How every command and library function selects tensors by pattern: `pattern` is the
/// exact `name`, or matches it as a glob (so a name containing `[` still selects itself).
[[nodiscard]] bool name_matches(std::string_view pattern, std::string_view name) noexcept;

}  // namespace safetensors
