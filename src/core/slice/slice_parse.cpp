// SPDX-License-Identifier: Apache-2.0
// Parsing text slice specs such as "0:8, ::2, -1, ...".
#include <fmt/format.h>

#include "safetensors/slice.h"

namespace safetensors {
namespace {

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t')) s.remove_suffix(1);
  return s;
}

/// A signed 64-bit integer, or nullopt (empty, junk, out of range).
std::optional<std::int64_t> parse_int(std::string_view s) {
  bool negative = false;
  if (!s.empty() && (s.front() == '-' || s.front() == '+')) {
    negative = s.front() == '-';
    s.remove_prefix(1);
  }
  if (s.empty()) return std::nullopt;
  std::uint64_t magnitude = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    if (__builtin_mul_overflow(magnitude, 10U, &magnitude) ||
        __builtin_add_overflow(magnitude, static_cast<unsigned>(c - '0'), &magnitude)) {
      return std::nullopt;
    }
  }
  constexpr std::uint64_t max_positive = INT64_MAX;
  if (magnitude > max_positive + (negative ? 1 : 0)) return std::nullopt;
  if (negative) return magnitude == max_positive + 1 ? INT64_MIN : -static_cast<std::int64_t>(magnitude);
  return static_cast<std::int64_t>(magnitude);
}

}  // namespace

result<std::vector<slice_index>> parse_slice_spec(std::string_view text) {
  std::string_view body = trim(text);
  if (!body.empty() && body.front() == '[') {
    if (body.back() != ']') {
      return make_error(error_code::invalid_slice, fmt::format("invalid slice spec '{}': unbalanced '['", text));
    }
    body = trim(body.substr(1, body.size() - 2));
  }
  std::vector<slice_index> out;
  if (body.empty()) return out;
  std::size_t item = 0;
  for (std::size_t begin = 0; begin <= body.size(); ++item) {
    std::size_t end = body.find(',', begin);
    if (end == std::string_view::npos) end = body.size();
    const std::string_view raw = trim(body.substr(begin, end - begin));
    const bool last = end == body.size();
    begin = end + 1;
    auto fail = [&](std::string_view why) {
      return make_error(error_code::invalid_slice,
                        fmt::format("invalid slice spec '{}': item {} ('{}'): {}", text, item + 1, raw, why));
    };
    if (raw.empty()) {
      if (last && item > 0) break;  // one trailing comma, as numpy's x[0,]
      return fail("empty item");
    }
    if (raw == "...") {
      out.push_back(slice_index::ellipsis());
      continue;
    }
    if (raw.find(':') == std::string_view::npos) {
      auto i = parse_int(raw);
      if (!i) return fail("expected an integer, a range start:stop[:step] or '...'");
      out.push_back(slice_index::at(*i));
      continue;
    }
    std::optional<std::int64_t> parts[3];
    std::size_t n = 0;
    for (std::size_t p = 0; p <= raw.size(); ++n) {
      std::size_t q = raw.find(':', p);
      if (q == std::string_view::npos) q = raw.size();
      if (n == 3) return fail("a range has at most two ':'");
      const std::string_view part = trim(raw.substr(p, q - p));
      if (!part.empty()) {
        parts[n] = parse_int(part);
        if (!parts[n]) return fail(fmt::format("'{}' is not a 64-bit integer", part));
      }
      p = q + 1;
    }
    if (parts[2] && *parts[2] == 0) return fail("slice step cannot be zero");
    out.push_back(slice_index::range(parts[0], parts[1], parts[2].value_or(1)));
  }
  return out;
}

}  // namespace safetensors
