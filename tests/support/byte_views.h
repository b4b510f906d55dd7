// SPDX-License-Identifier: Apache-2.0
// Bytes of test data as the spans the library reads.
#pragma once

#include <cstddef>
#include <span>
#include <string_view>
#include <vector>

namespace st_test {

/// The bytes of `text` (which must outlive the span).
inline std::span<const std::byte> bytes_of(std::string_view text) { return std::as_bytes(std::span(text)); }

/// The bytes of `values` (which must outlive the span).
template <class T>
std::span<const std::byte> bytes_of(const std::vector<T>& values) {
  return std::as_bytes(std::span(values));
}

}  // namespace st_test
