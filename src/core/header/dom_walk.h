// SPDX-License-Identifier: Apache-2.0
// Internal: stages 4-7 with the JSON schema walk over a simdjson DOM, the reference walk
// that every header the fast passes decline ends in (errors included). Duplicate keys
// anywhere are rejected (our deviation from the reference).
#pragma once

#include <cstddef>
#include <cstdint>

#include <simdjson.h>

#include "safetensors/error.h"
#include "safetensors/header.h"

namespace safetensors::detail {

/// `text` (n bytes) is followed by SIMDJSON_PADDING readable bytes.
[[nodiscard]] result<header> dom_walk(simdjson::dom::parser& parser, const char* text, std::size_t n,
                                      std::uint64_t file_size, const parse_options& options);

}  // namespace safetensors::detail
