// SPDX-License-Identifier: Apache-2.0
// Turning "header too large" on a file that was never SafeTensors into what a user can act
// on: the format it really is, or that it is not SafeTensors at all, a pipe, or truncated.
#pragma once

#include <string>

#include "safetensors/error.h"

namespace st_cli {

/// When `e` is a length-prefix error (HeaderTooSmall, HeaderTooLarge, InvalidHeaderLength)
/// about the file `e.path`, looks at that
/// file (stat, then its first bytes; never opens a pipe) and rewrites the message:
///   "this is a GGUF file, not SafeTensors"
///   "not a SafeTensors file: its first 8 bytes read as a header length of N bytes, ..."
///   "a pipe cannot be read as SafeTensors: save it to a file first"
///   "empty file (0 bytes), not SafeTensors" / "file is truncated: ..."
/// The code and path stay; every other error is returned unchanged.
[[nodiscard]] safetensors::error explain_input_error(safetensors::error e);

}  // namespace st_cli

namespace st_cli {

/// "<path>: <Code>: <message> (at byte N, tensor 'T')": one line of a problem list, the
/// path said once (the error's own path, else `path`), the message explained as above.
[[nodiscard]] std::string problem_line(const safetensors::error& e, const std::string& path);

/// The problem as a JSON object: {"file","code","message","offset","tensor"}.
[[nodiscard]] std::string problem_json(const safetensors::error& e, const std::string& path);

}  // namespace st_cli
