// SPDX-License-Identifier: Apache-2.0
// Internal: the fastest reading of a header, for the layout writers produce: one pass over
// the bytes, recognising only the schema (no JSON tree, no structural index). Like the
// On-Demand walk it judges nothing: on anything it does not recognise it declines, and the
// next walk reads the header instead, so verdicts and errors stay the DOM walk's.
#pragma once

#include <cstddef>

#include "header/header_builder.h"
#include "safetensors/policy.h"

namespace safetensors::detail {

/// Reads the `n` bytes of JSON at `text` (followed by at least json_padding readable bytes
/// of any content) into `out` and returns true when the header is plain in the sense of
/// walk_plain_header (ondemand_walk.h) and, in addition, spelled simply: it starts with
/// `{`, no string holds a backslash, and every number is 1 to 19 digits without a leading
/// zero. Whitespace between tokens and UTF-8 in strings are fine. Anything else, valid or
/// not, returns false with `out` half-filled.
[[nodiscard]] bool scan_plain_header(const char* text, std::size_t n, const parse_options& options,
                                     header_builder& out);

}  // namespace safetensors::detail
