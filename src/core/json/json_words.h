// SPDX-License-Identifier: Apache-2.0
// Internal: the words for a JSON parse failure, the same on every simdjson kernel.
#pragma once

#include <simdjson.h>

#include <string_view>

namespace safetensors::detail {

/// simdjson's message for a failed parse of `json`, worded as its SIMD kernels word it. Those
/// kernels find an unclosed string and an unescaped control character in a string in a first
/// pass over the whole text, before any other error; the fallback kernel (the only one in
/// WebAssembly) finds them later, under other codes. This finds them from the text itself, so a
/// file gets the same words from the CLI, Python, C and the browser.
[[nodiscard]] const char* json_error_words(simdjson::error_code reported, std::string_view json) noexcept;

}  // namespace safetensors::detail
