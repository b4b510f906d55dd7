// SPDX-License-Identifier: Apache-2.0
/// \file json_text.h
/// JSON text the library writes: quoted strings with serde_json's escaping, and the
/// canonical compact form of a header.
#pragma once

#include <string>
#include <string_view>

#include "safetensors/header.h"

namespace safetensors {

/// `text` as a JSON string literal (quotes included), escaped as serde_json does (so every
/// C0 control, ESC included, is an escape), except that DEL, the C1 controls U+0080-U+009F,
/// the bidirectional controls U+202A-U+202E and U+2066-U+2069 and U+2028 and U+2029 become
/// `\u007f`, `\u009b`, `\u202e`, ...: valid JSON either way, but terminals obey those and many
/// line-based tools split lines at the last two. (Written headers keep serde_json's bytes exactly.)
[[nodiscard]] std::string json_quote(std::string_view text);

/// The header as compact JSON in writer form: `__metadata__` first (if present), then
/// the tensors in file order with fields dtype, shape, data_offsets. No padding.
[[nodiscard]] std::string header_to_json(const header& h);

/// header_to_json with json_quote's escaping of names and metadata: the same JSON value, for
/// output a terminal may show (`inspect --json`), never for a file's header.
[[nodiscard]] std::string header_to_display_json(const header& h);

}  // namespace safetensors
