// SPDX-License-Identifier: Apache-2.0
/// \file gguf_metadata.h
/// GGUF metadata as SafeTensors `__metadata__` strings, and back, without loss.
///
/// Each GGUF key keeps its name; its value becomes text: integers in decimal, floats in
/// the shortest form that reads back to the same value ("nan", "inf", "-inf" for the
/// non-finite), BOOL as "true"/"false", STRING unchanged, arrays as JSON text (strings
/// quoted, non-finite floats as the strings above). The extra key `__gguf_types__`
/// holds a JSON array of [key, type] pairs in the file's order ("UINT32",
/// "ARRAY[STRING]", ...), so the reverse conversion restores types and order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/formats/gguf.h"
#include "safetensors/header.h"

namespace safetensors::gguf {

/// The `__metadata__` key that records GGUF value types and key order.
inline constexpr std::string_view types_key = "__gguf_types__";

/// A value's text, as described above.
[[nodiscard]] std::string to_text(const value& v);
/// A value's type tag: "UINT32", "STRING", "ARRAY[FLOAT32]", ...
[[nodiscard]] std::string type_tag(const value& v);
/// Reads `text` back as a value of type `tag`. Errors: invalid_argument naming what is wrong.
[[nodiscard]] result<value> from_text(std::string_view tag, std::string_view text);

/// The metadata of `h` as `__metadata__`, with types_key. Errors: invalid_argument when
/// the file already uses types_key as a key.
[[nodiscard]] result<metadata_map> to_safetensors_metadata(std::span<const metadata_entry> metadata);
/// Typed GGUF metadata from `__metadata__`: keys listed in types_key get their types, in
/// that order; other keys follow as STRING values in key order. Errors: invalid_argument
/// for a malformed types_key or a value that does not parse as its type (naming the key).
[[nodiscard]] result<std::vector<metadata_entry>> from_safetensors_metadata(const metadata_map& metadata);

}  // namespace safetensors::gguf
