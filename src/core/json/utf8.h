// SPDX-License-Identifier: Apache-2.0
// Internal: UTF-8 validation that also says where the first bad byte is.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>

namespace safetensors::detail {

/// Index of the first byte that starts an invalid UTF-8 sequence; nullopt when valid.
/// Fast path: simdjson's SIMD validator; the scalar scan runs only on failure.
[[nodiscard]] std::optional<std::size_t> first_invalid_utf8(std::string_view text) noexcept;

}  // namespace safetensors::detail
