// SPDX-License-Identifier: Apache-2.0
// Stages 1-5 of validation: the length prefix, then the header JSON through the walks in
// turn: the schema scan (header/plain_scan.h) and the On-Demand pass
// (header/ondemand_walk.h) for plain headers, which hand everything else, errors
// included, to the DOM walk (header/dom_walk.h), the reference. The parsers' memory comes
// from a header_parser or the calling thread's lease (header/parser_pool.h).
#include <memory>

#include <fmt/format.h>
#include <simdjson.h>

#include "header/dom_walk.h"
#include "header/header_builder.h"
#include "header/header_walks.h"
#include "header/ondemand_walk.h"
#include "header/parser_pool.h"
#include "header/plain_scan.h"
#include "safetensors/sniff.h"

namespace safetensors {

namespace {

/// Stages 1-3 in the reference's terms; read_header_length words the errors for the user.
result<std::uint64_t> read_length_prefix(std::span<const std::byte> prefix, std::uint64_t file_size,
                                         const parse_options& options) {
  if (file_size < 8 || prefix.size() < 8) {
    return make_error(error_code::header_too_small,
                      fmt::format("header too small: the file has {} bytes, the length prefix needs 8", file_size), 0);
  }
  std::uint64_t n = 0;
  for (int i = 7; i >= 0; --i) n = (n << 8) | std::to_integer<std::uint64_t>(prefix[static_cast<std::size_t>(i)]);
  const std::uint64_t cap = options.effective_limits().max_header_bytes;
  if (n > cap) {
    return make_error(error_code::header_too_large,
                      fmt::format("header too large: length prefix says {} bytes, the limit is {}", n, cap), 0);
  }
  if (n > file_size - 8) {
    return make_error(
        error_code::invalid_header_length,
        fmt::format("invalid header length: {} header bytes do not fit in a file of {} bytes", n, file_size), 0);
  }
  return n;
}

}  // namespace

result<std::uint64_t> read_header_length(std::span<const std::byte> prefix, std::uint64_t file_size,
                                         const parse_options& options) {
  auto n = read_length_prefix(prefix, file_size, options);
  if (!n) return explain_framing_error(std::move(n).err(), prefix, file_size);
  return n;
}

namespace {

static_assert(detail::json_padding == simdjson::SIMDJSON_PADDING);

/// Stages 4-7; `padded` says SIMDJSON_PADDING readable bytes follow the JSON (their
/// content does not matter), so it is parsed in place instead of copied. A plain header
/// takes the schema scan alone, or the On-Demand pass when spelled unusually (escapes,
/// long numbers); anything else, errors included, the DOM walk.
result<header> parse_header_json(detail::json_parsers& parsers, detail::header_walk walk,
                                 std::span<const std::byte> header_json, std::uint64_t file_size,
                                 const parse_options& options, bool padded) {
  const char* text = reinterpret_cast<const char*>(header_json.data());
  const std::size_t n = header_json.size();
  if (n == 0) {  // valid UTF-8
    return make_error(error_code::invalid_header_deserialization,
                      "invalid JSON in header: EOF while parsing a value (the header is empty)");
  }
  if (!padded) {
    text = parsers.padded_copy(std::string_view(text, n));
    if (text == nullptr) return make_error(error_code::io, fmt::format("cannot allocate {} bytes for the JSON", n));
  }
  if (walk != detail::header_walk::dom_only) {
    detail::header_builder builder;
    builder.reuse(parsers.spare);
    if (walk == detail::header_walk::scan_then_ondemand_then_dom) {
      if (detail::scan_plain_header(text, n, options, builder)) return builder.finish(n, file_size, options.policy);
      builder.tensors.clear();  // what the scan read before it declined; the reservations stay
      builder.dims.clear();
      builder.metadata.reset();
    }
    if (detail::walk_plain_header(parsers.ondemand, text, n, options, builder)) {
      return builder.finish(n, file_size, options.policy);
    }
  }
  return detail::dom_walk(parsers.dom, text, n, file_size, options);
}

/// Stages 1-7 on a whole file held in memory, with `parsers`.
result<header> parse_file_with(detail::json_parsers& parsers, detail::header_walk walk, std::span<const std::byte> file,
                               const parse_options& options) {
  auto n = read_header_length(file, file.size(), options);
  if (!n) return std::move(n).err();
  // The data after the header pads the JSON for simdjson when there are enough bytes.
  const bool padded = file.size() - 8 - *n >= detail::json_padding;
  return parse_header_json(parsers, walk, file.subspan(8, static_cast<std::size_t>(*n)), file.size(), options, padded);
}

constexpr auto default_walk = detail::header_walk::scan_then_ondemand_then_dom;

}  // namespace

result<header> parse_header(std::span<const std::byte> header_json, std::uint64_t file_size,
                            const parse_options& options) {
  return detail::parse_header_with(default_walk, header_json, file_size, options, false);
}

result<header> detail::parse_header_padded(std::span<const std::byte> header_json, std::uint64_t file_size,
                                           const parse_options& options) {
  return detail::parse_header_with(default_walk, header_json, file_size, options, true);
}

result<header> parse_file_bytes(std::span<const std::byte> file, const parse_options& options) {
  return detail::parse_file_bytes_with(default_walk, file, options);
}

result<header> detail::parse_header_with(header_walk walk, std::span<const std::byte> header_json,
                                         std::uint64_t file_size, const parse_options& options, bool padded) {
  detail::parser_lease lease;
  return parse_header_json(lease.parsers, walk, header_json, file_size, options, padded);
}

result<header> detail::parse_file_bytes_with(header_walk walk, std::span<const std::byte> file,
                                             const parse_options& options) {
  detail::parser_lease lease;
  return parse_file_with(lease.parsers, walk, file, options);
}

struct header_parser::state {
  detail::json_parsers parsers;
};

header_parser::header_parser() : state_(std::make_unique<state>()) {}
header_parser::~header_parser() = default;
header_parser::header_parser(header_parser&&) noexcept = default;
header_parser& header_parser::operator=(header_parser&&) noexcept = default;

result<header> header_parser::parse(std::span<const std::byte> header_json, std::uint64_t file_size,
                                    const parse_options& options) {
  return parse_header_json(state_->parsers, default_walk, header_json, file_size, options, false);
}

result<header> header_parser::parse_file_bytes(std::span<const std::byte> file, const parse_options& options) {
  return parse_file_with(state_->parsers, default_walk, file, options);
}

result<header> detail::parse_header_padded(header_parser& parser, std::span<const std::byte> header_json,
                                           std::uint64_t file_size, const parse_options& options) {
  return parse_header_json(parser.state_->parsers, default_walk, header_json, file_size, options, true);
}

void header_parser::recycle(header&& spent) noexcept { state_->parsers.spare = std::move(spent); }

}  // namespace safetensors
