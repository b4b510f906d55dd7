// SPDX-License-Identifier: Apache-2.0
// A problem as one line or one JSON object, its message explained the library's way
// (safetensors::explain_format_error: "this is a GGUF file, not SafeTensors", ...).
#pragma once

#include <string>

#include "safetensors/error.h"

namespace st_cli {

/// "<path>: <Code>: <message> (at byte N, tensor 'T')": one line of a problem list, the
/// path said once (the error's own path, else `path`).
[[nodiscard]] std::string problem_line(const safetensors::error& e, const std::string& path);

/// The problem as a JSON object: {"file","code","message","offset","tensor"}.
[[nodiscard]] std::string problem_json(const safetensors::error& e, const std::string& path);

}  // namespace st_cli
