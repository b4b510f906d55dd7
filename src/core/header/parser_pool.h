// SPDX-License-Identifier: Apache-2.0
// Internal: the reusable memory of header parses (both simdjson parsers, a padded copy of
// the JSON, a recycled result), owned by a header_parser or leased per thread.
#pragma once

#include <algorithm>
#include <cstddef>
#include <memory>
#include <string_view>

#include <simdjson.h>

#include "safetensors/header.h"

namespace safetensors::detail {

/// A parse's reusable memory: both JSON parsers and a padded copy of JSON that arrives
/// without padding. Kept between headers: allocating and first-touching these buffers
/// costs more than parsing a small header.
struct json_parsers {
  simdjson::dom::parser dom;
  simdjson::ondemand::parser ondemand;
  std::unique_ptr<char[], array_deleter> copy;  // uninitialised: only the bytes written are touched
  std::size_t copy_capacity = 0;
  header spare;  // a result handed back (header_parser::recycle): its arrays are reused

  /// `json` followed by SIMDJSON_PADDING readable bytes: the copy's, grown as needed;
  /// nullptr when memory runs out.
  const char* padded_copy(std::string_view json);
  [[nodiscard]] std::size_t capacity() const noexcept {
    return std::max({dom.capacity(), ondemand.capacity(), copy_capacity});
  }
};

/// The calling thread's parsers, reused across headers. Buffers grown past
/// `max_retained_capacity` bytes of JSON are released when the lease ends, so one huge
/// header does not pin memory for the thread's lifetime.
struct parser_lease {
  static constexpr std::size_t max_retained_capacity = std::size_t{16} << 20;
  json_parsers& parsers = cached();
  parser_lease() = default;
  parser_lease(const parser_lease&) = delete;
  parser_lease& operator=(const parser_lease&) = delete;
  ~parser_lease() {
    if (parsers.capacity() > max_retained_capacity) parsers = json_parsers();
  }
  static json_parsers& cached();
};

}  // namespace safetensors::detail
