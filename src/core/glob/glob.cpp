// SPDX-License-Identifier: Apache-2.0
// Glob matching with the classic single-backtrack algorithm: linear memory, no recursion.
#include "safetensors/glob.h"

#include <cstddef>

namespace safetensors {
namespace {

/// Matches one pattern element at p against c; sets `next` past it. False on mismatch.
bool match_one(std::string_view pattern, std::size_t p, char c, std::size_t& next) noexcept {
  if (pattern[p] == '\\' && p + 1 < pattern.size()) {
    next = p + 2;
    return pattern[p + 1] == c;
  }
  if (pattern[p] == '?') {
    next = p + 1;
    return true;
  }
  if (pattern[p] == '[') {
    std::size_t i = p + 1;
    const bool negate = i < pattern.size() && (pattern[i] == '!' || pattern[i] == '^');
    if (negate) ++i;
    bool found = false;
    const std::size_t first = i;
    while (i < pattern.size() && (pattern[i] != ']' || i == first)) {
      if (i + 2 < pattern.size() && pattern[i + 1] == '-' && pattern[i + 2] != ']') {
        if (pattern[i] <= c && c <= pattern[i + 2]) found = true;
        i += 3;
      } else {
        if (pattern[i] == c) found = true;
        ++i;
      }
    }
    if (i < pattern.size()) {  // a closed set
      next = i + 1;
      return found != negate;
    }
    // An unclosed '[' is a literal.
  }
  next = p + 1;
  return pattern[p] == c;
}

}  // namespace

bool glob_match(std::string_view pattern, std::string_view text) noexcept {
  std::size_t p = 0;
  std::size_t t = 0;
  std::size_t star_p = std::string_view::npos;  // pattern position after the last '*'
  std::size_t star_t = 0;                       // text position that '*' absorbs up to
  while (t < text.size()) {
    std::size_t next = 0;
    if (p < pattern.size() && pattern[p] == '*') {
      star_p = ++p;
      star_t = t;
    } else if (p < pattern.size() && match_one(pattern, p, text[t], next)) {
      p = next;
      ++t;
    } else if (star_p != std::string_view::npos) {
      p = star_p;
      t = ++star_t;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

bool name_matches(std::string_view pattern, std::string_view name) noexcept {
  return pattern == name || glob_match(pattern, name);
}

}  // namespace safetensors
