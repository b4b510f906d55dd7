// SPDX-License-Identifier: Apache-2.0
// Internal: the header's schema walk as one pass over simdjson's On-Demand iterator, for
// the shape nearly every file has. It judges nothing itself: on anything unusual it
// declines and the DOM walk (header_parse.cpp, the reference) reads the header instead,
// so verdicts, errors and their order are the DOM walk's by construction.
#pragma once

#include <cstddef>

#include <simdjson.h>

#include "header/header_builder.h"
#include "safetensors/policy.h"

namespace safetensors::detail {

/// Reads the `n` bytes of JSON at `text` (followed by at least SIMDJSON_PADDING readable
/// bytes of any content) into `out` and returns true when the header is plain: a
/// top-level object of tensor entries, each with the fields dtype, shape and data_offsets
/// once (in any order) holding a known dtype and non-negative 64-bit integers, and at most
/// one `__metadata__`, null or a map of strings with distinct keys; within every limit of
/// `options`. Anything else, valid or not (unknown fields, a JSON error, a reached limit),
/// returns false with `out` half-filled: the caller then runs the DOM walk.
/// Duplicate tensor names and the offset checks are left to header_builder::finish, as
/// for the DOM walk.
[[nodiscard]] bool walk_plain_header(simdjson::ondemand::parser& parser, const char* text, std::size_t n,
                                     const parse_options& options, header_builder& out);

}  // namespace safetensors::detail
