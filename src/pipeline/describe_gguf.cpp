// SPDX-License-Identifier: Apache-2.0
// A GGUF file as `inspect` shows it: version, alignment, metadata (long arrays and strings
// abbreviated, control characters escaped) and the tensor table with ggml types,
// row-major shapes and offsets; or all of it as JSON.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <string>
#include <vector>

#include "format_describers.h"
#include "safetensors/formats/gguf.h"
#include "safetensors/formats/gguf_metadata.h"
#include "safetensors/json_text.h"
#include "safetensors/printable_text.h"

namespace safetensors::pipeline::detail {
namespace {

namespace gguf = safetensors::gguf;

constexpr std::size_t shown_elements = 8;  // array elements printed before "..."
constexpr std::size_t shown_chars = 120;   // string bytes printed before "..."

/// Digits grouped by three with commas, as the CLI prints counts (1,234,567).
/// The first `shown_elements` elements of an array (the whole array when shorter).
gguf::array_value head_of(const gguf::array_value& a) {
  gguf::array_value head;
  head.element_type = a.element_type;
  if (a.element_type == gguf::value_type::string) {
    const std::size_t n = std::min(a.strings.size(), shown_elements);
    head.strings.reserve(n);
    for (std::size_t i = 0; i < n; ++i) head.strings.push_back(a.strings[i]);
  } else {
    const std::size_t bytes = std::min(a.packed.size(), shown_elements * gguf::value_type_size(a.element_type));
    head.packed.assign(a.packed.begin(), a.packed.begin() + static_cast<std::ptrdiff_t>(bytes));
  }
  return head;
}

/// A value as inspect prints it: escaped (printable_text), strings cut, arrays to their first elements.
std::string abbreviated_text(const gguf::value& v) {
  if (const auto* a = std::get_if<gguf::array_value>(&v)) {
    std::string text;
    if (a->element_type == gguf::value_type::string) {
      // ["a", "b"]: each element escaped and cut as a string value is (a token may be any bytes).
      std::vector<std::string> shown;
      for (std::size_t i = 0; i < std::min(a->strings.size(), shown_elements); ++i) {
        shown.push_back(fmt::format("\"{}\"", printable_text(a->strings[i], shown_chars)));
      }
      text = fmt::format("[{}]", fmt::join(shown, ","));
    } else {
      text = gguf::to_text(gguf::value(std::in_place_index<9>, head_of(*a)));
    }
    if (a->size() > shown_elements)
      text.insert(text.size() - 1, fmt::format(", ... ({} more)", a->size() - shown_elements));
    return text;
  }
  // Strings may hold newlines (chat templates): escaped, and cut, so each key stays one line.
  return printable_text(gguf::to_text(v), shown_chars);
}

/// A JSON value: numbers and booleans bare (non-finite floats quoted), strings quoted,
/// arrays abbreviated to their first elements.
std::string json_value(const gguf::value& v) {
  if (const auto* a = std::get_if<gguf::array_value>(&v)) {
    return gguf::to_text(gguf::value(std::in_place_index<9>, head_of(*a)));
  }
  if (std::holds_alternative<std::string>(v)) return safetensors::json_quote(gguf::to_text(v));
  const std::string text = gguf::to_text(v);
  const bool non_finite = text == "nan" || text == "-nan" || text == "inf" || text == "-inf";
  return non_finite ? safetensors::json_quote(text) : text;
}

std::string gguf_json(const gguf::header& h) {
  std::string out = fmt::format(R"({{"format":"gguf","version":{},"alignment":{},"data_start":{},"metadata":{{)",
                                h.version, h.alignment, h.data_start);
  bool first = true;
  for (const auto& e : h.metadata) {
    if (!first) out += ',';
    first = false;
    out += fmt::format(R"({}:{{"type":{},"value":{})", safetensors::json_quote(e.key),
                       safetensors::json_quote(gguf::type_tag(e.val)), json_value(e.val));
    if (const auto* a = std::get_if<gguf::array_value>(&e.val)) {
      out += fmt::format(R"(,"count":{},"truncated":{})", a->size(), a->size() > shown_elements);
    }
    out += '}';
  }
  out += R"(},"tensors":[)";
  first = true;
  for (const auto& t : h.tensors) {
    if (!first) out += ',';
    first = false;
    out += fmt::format(R"({{"name":{},"type":{},"shape":[{}],"offset":{},"bytes":{}}})",
                       safetensors::json_quote(t.name), safetensors::json_quote(gguf::traits(t.type).name),
                       fmt::join(t.shape, ","), h.data_start + t.offset, t.byte_size);
  }
  return out + "]}";
}

}  // namespace

// By hand, not through a std::locale: the WebAssembly inspector would carry libc++'s locales for it.
std::string with_commas(std::uint64_t n) {
  std::string digits = std::to_string(n);
  for (std::size_t at = digits.size(); at > 3; at -= 3) digits.insert(at - 3, 1, ',');
  return digits;
}

result<format_description> describe_gguf(const std::string& path, description_style style) {
  auto in = gguf::reader::open(path);
  if (!in) return safetensors::error(in.err()).with_path(path);
  const gguf::header& h = in->header();
  format_description out;
  if (style == description_style::json) {
    out.json = gguf_json(h);
    return out;
  }
  out.format = fmt::format("GGUF v{}, alignment {}, data starts at byte {}", h.version, h.alignment, h.data_start);
  out.extra_title = "offset";
  for (const auto& e : h.metadata) {
    out.metadata.emplace_back(fmt::format("{} ({})", e.key, gguf::type_tag(e.val)), abbreviated_text(e.val));
  }
  for (const auto& t : h.tensors) {
    out.tensors.push_back({t.name,
                           std::string(gguf::traits(t.type).name),
                           t.shape,
                           t.byte_size,
                           t.element_count,
                           with_commas(h.data_start + t.offset),
                           {},
                           {}});
    if (const auto plain = gguf::plain_dtype(t.type)) {
      out.tensors.back().data = described_tensor::plain_bytes{h.data_start + t.offset, t.byte_size, *plain};
    } else {
      out.tensors.back().no_data = fmt::format("quantized type {}", gguf::traits(t.type).name);
    }
  }
  return out;
}

}  // namespace safetensors::pipeline::detail
