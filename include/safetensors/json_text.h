// SPDX-License-Identifier: Apache-2.0
/// \file json_text.h
/// JSON text the library writes: quoted strings with serde_json's escaping, and the
/// canonical compact form of a header.
#pragma once

#include <string>
#include <string_view>

#include "safetensors/header.h"

namespace safetensors {

/// `text` as a JSON string literal (quotes included), escaped as serde_json does, except
/// that U+2028 and U+2029 become `\u2028` and `\u2029`: valid JSON either way, but many
/// line-based tools split lines there. (Written headers keep serde_json's bytes exactly.)
[[nodiscard]] std::string json_quote(std::string_view text);

/// The header as compact JSON in writer form: `__metadata__` first (if present), then
/// the tensors in file order with fields dtype, shape, data_offsets. No padding.
[[nodiscard]] std::string header_to_json(const header& h);

}  // namespace safetensors
