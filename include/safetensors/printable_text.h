// SPDX-License-Identifier: Apache-2.0
/// \file printable_text.h
/// Untrusted text (tensor names, metadata, names read from pickles, zip archives and GGUF
/// files, error messages that quote them) made safe to show on a terminal: nothing in it
/// can move the cursor, retitle the window, erase a line or reorder what is shown.
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace safetensors {

/// `text` with every character that could drive a terminal written as an escape, the rest as is:
/// - `\` as `\\`, so every escape below is unambiguous;
/// - line feed, carriage return and tab as `\n`, `\r`, `\t`; the other C0 controls
///   (ESC included) and DEL as `\xHH` (lower-case hex: `\x1b`);
/// - a byte that is not part of well-formed UTF-8 as `\xHH` (the byte's value);
/// - the C1 controls U+0080-U+009F, the bidirectional controls U+202A-U+202E and
///   U+2066-U+2069 and the separators U+2028 and U+2029 as `\uHHHH` (`\u202e`).
/// So `\xHH` is always one byte of the input and `\uHHHH` one character.
[[nodiscard]] std::string printable_text(std::string_view text);

/// The same, of at most the first `max_bytes` bytes of `text` (cut between characters),
/// followed by "... (N bytes)" when it was cut: one line however long the text is.
[[nodiscard]] std::string printable_text(std::string_view text, std::size_t max_bytes);

}  // namespace safetensors
