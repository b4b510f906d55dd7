// SPDX-License-Identifier: Apache-2.0
// Internal: JSON string output with serde_json's escaping, so written headers are
// byte-identical to the reference writer's.
#pragma once

#include <string>
#include <string_view>

namespace safetensors::detail {

/// Appends `"text"` to `out`: `"` `\` and \n \r \t \b \f get short escapes, other
/// control characters \u00xx (lower-case hex); everything else, `/` and non-ASCII
/// included, is copied as is.
void append_json_string(std::string& out, std::string_view text);

/// append_json_string with json_quote's escaping (DEL, C1 and bidirectional controls,
/// U+2028/U+2029 as \uHHHH too): for text a terminal may show, not for written headers.
void append_json_display_string(std::string& out, std::string_view text);

}  // namespace safetensors::detail
