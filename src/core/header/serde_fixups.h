// SPDX-License-Identifier: Apache-2.0
// Internal: where simdjson's DOM and serde_json (the reference's JSON reader) disagree on
// numbers, the DOM walk asks these: `-0` in a shape or offsets (serde reads a float),
// integers beyond 64 bits and floats serde reads as finite (respelled so the DOM reads
// them as floats), and numbers out of serde's range.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "safetensors/error.h"

namespace safetensors::detail {

/// True when a `-0` integer token may stand where a number can; a cheap filter.
[[nodiscard]] bool may_contain_negative_zero(std::string_view text);
/// The reference's error for a `-0` in a shape or data_offsets, if there is one.
[[nodiscard]] std::optional<error> find_negative_zero(std::string_view text);
/// serde_json's verdict on the number tokens of `text`: the first one out of its range.
[[nodiscard]] std::optional<error> check_number_range(std::string_view text);
/// `text` with every number serde_json reads as a float spelled `0.0` plus spaces.
[[nodiscard]] std::string respell_floats(std::string_view text);

}  // namespace safetensors::detail
