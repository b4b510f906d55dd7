// SPDX-License-Identifier: Apache-2.0
// The nested lists `dump` prints a tensor's values in, numpy-style or as JSON arrays: the
// shape walked with an index per dimension, never a recursion per dimension.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>

namespace st_cli {

/// Nested brackets, last dimension on one line, at most `limit` values (0: all), handed to
/// `out` as they are formatted. In JSON mode: nested arrays on one line, cut off without a
/// "..." marker.
///
/// A valid file may have millions of dimensions (one per 2 header bytes), so the walk keeps
/// one index per dimension and recurses not at all. What it prints stays proportional to
/// what was asked for: an empty innermost list counts against `limit` as a value does (a
/// [1000000000, 0] tensor has no values but would print a billion "[]"), no more than
/// `lists_per_value` lists are opened per value on average (a [1000] + [1]*1000000 tensor
/// wraps each value in a million brackets), and indentation stops growing at `max_indent`.
class nested_lists {
 public:
  static constexpr std::size_t max_indent = 64;  // numpy's most dimensions
  static constexpr std::uint64_t lists_per_value = 64;

  /// `value` gives the next value's text; `out` takes the text; `stop` (may be empty) says
  /// whether to stop early (the reader went away, a value could not be read).
  struct callbacks {
    std::function<std::string()> value;
    std::function<void(std::string_view)> out;
    std::function<bool()> stop;
  };

  nested_lists(std::span<const std::uint64_t> shape, std::uint64_t limit, bool json)
      : shape_(shape), limit_(limit), json_(json) {}

  /// Prints the lists; true when the limit cut them short.
  bool print(const callbacks& io) const;
  /// Whether printing cuts the lists short: the same walk, printing nothing.
  [[nodiscard]] bool cuts() const;

 private:
  bool walk(const callbacks* io) const;

  std::span<const std::uint64_t> shape_;
  std::uint64_t limit_;
  bool json_;
};

}  // namespace st_cli
