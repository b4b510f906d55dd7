// SPDX-License-Identifier: Apache-2.0
// Internal: a small, strict parser for the Python literals of a .npy header
// ({'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }). It evaluates nothing:
// it accepts only dicts with string keys, tuples, lists, strings, integers, True, False
// and None, and bounds nesting depth so hostile input cannot exhaust the stack.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "safetensors/error.h"

namespace safetensors::numpy::detail {

struct py_value {
  enum class kind : std::uint8_t { none, boolean, integer, string, tuple, list, dict };
  kind type = kind::none;
  bool boolean = false;
  std::int64_t integer = 0;
  std::string text;               // string
  std::vector<py_value> items;    // tuple, list; dict values
  std::vector<std::string> keys;  // dict keys, parallel to items

  /// The value under `key` in a dict, or nullptr.
  [[nodiscard]] const py_value* find(std::string_view key) const noexcept;
};

/// Nesting deeper than this is rejected (structured dtypes nest a few levels at most).
inline constexpr int py_literal_max_depth = 32;

/// A dict with more keys is rejected (a header has three); keeps key lookup cheap.
inline constexpr std::size_t py_literal_max_dict_keys = 64;

/// Parses one literal filling all of `text` (surrounding whitespace allowed).
/// Errors are InvalidFormat with `offset` = position in `text`.
[[nodiscard]] result<py_value> parse_py_literal(std::string_view text);

/// The kind's Python name ("dict", "tuple", ...) for messages.
[[nodiscard]] std::string_view py_kind_name(py_value::kind k) noexcept;

}  // namespace safetensors::numpy::detail
