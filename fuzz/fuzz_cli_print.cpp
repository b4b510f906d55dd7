// SPDX-License-Identifier: Apache-2.0
// The CLI's printing paths over every header the library accepts: dump's nested lists of
// each tensor (text and JSON, under several limits), inspect's tensor table and --tree (text
// and JSON), and printable_text of every name and metadata entry. Properties: nothing
// crashes or recurses per dimension; the lists are balanced, hold at most `limit` values and
// stay proportional to rank and limit; no raw control reaches the printed text.
#include <cstdio>
#include <string>
#include <vector>

#include "fuzz_support.h"
#include "nested_lists.h"
#include "safetensors/header.h"
#include "safetensors/printable_text.h"
#include "tensor_table.h"
#include "tree.h"

namespace {

/// A C0 control, DEL, or the UTF-8 of a C1 or bidirectional control.
bool has_raw_control(const std::string& text) {
  for (std::size_t i = 0; i < text.size(); ++i) {
    const auto c = static_cast<unsigned char>(text[i]);
    const auto next = [&](std::size_t k) { return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0; };
    if (c < 0x20 || c == 0x7F) return true;
    if (c == 0xC2 && next(1) >= 0x80 && next(1) <= 0x9F) return true;
    if (c == 0xE2 && ((next(1) == 0x80 && next(2) >= 0xAA && next(2) <= 0xAE) ||
                      (next(1) == 0x81 && next(2) >= 0xA6 && next(2) <= 0xA9))) {
      return true;
    }
  }
  return false;
}

void check_lists(std::span<const std::uint64_t> shape, std::uint64_t limit, bool json) {
  const st_cli::nested_lists lists(shape, limit, json);
  std::string text;
  std::uint64_t values = 0;
  const bool cut = lists.print({.value =
                                    [&values] {
                                      ++values;
                                      return std::string("0");
                                    },
                                .out = [&text](std::string_view t) { text += t; },
                                .stop = {}});
  ST_FUZZ_CHECK(cut == lists.cuts());
  std::int64_t depth = 0;
  for (const char c : text) {
    depth += c == '[' ? 1 : c == ']' ? -1 : 0;
    ST_FUZZ_CHECK(depth >= 0);
  }
  ST_FUZZ_CHECK(depth == 0);
  ST_FUZZ_CHECK(limit == 0 || values <= limit);
  if (limit != 0) {
    // Brackets, at most max_indent + 4 bytes of separator and "..." per item or list, and the values.
    const std::uint64_t items = limit + shape.size() + limit * st_cli::nested_lists::lists_per_value;
    ST_FUZZ_CHECK(text.size() <= 2 * shape.size() + items * (st_cli::nested_lists::max_indent + 8));
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  static const bool quiet = std::freopen("/dev/null", "w", stdout) != nullptr;  // the printers write to stdout
  (void)quiet;
  auto h = parse_file_bytes(st_fuzz::as_bytes(data, size), parse_options{validation_policy::lenient, std::nullopt});
  if (!h) return 0;
  std::vector<st_cli::table_row> rows;
  std::size_t checked = 0;
  for (const auto& t : h->tensors()) {
    ST_FUZZ_CHECK(!has_raw_control(printable_text(t.name)));
    if (checked++ < 16) {  // enough to reach every shape the input spells, bounded per run
      for (const std::uint64_t limit : {std::uint64_t{1}, std::uint64_t{7}, std::uint64_t{1000}}) {
        check_lists(t.shape, limit, false);
        check_lists(t.shape, limit, true);
      }
    }
    rows.push_back({{std::string(t.name), std::string(dtype_name(t.type)),
                     std::vector<std::uint64_t>(t.shape.begin(), t.shape.end()), t.byte_size(), t.element_count()},
                    ""});
  }
  if (h->metadata()) {
    for (const auto& [k, v] : *h->metadata()) {
      ST_FUZZ_CHECK(!has_raw_control(printable_text(k)) && !has_raw_control(printable_text(v, 120)));
    }
  }
  std::vector<st_cli::tree_tensor> tensors;
  for (const auto& r : rows) tensors.push_back(r.tensor);
  const st_cli::name_tree tree = st_cli::build_name_tree(tensors);
  st_cli::print_name_tree(tree, -1);
  const std::string json = st_cli::name_tree_json(tree);
  ST_FUZZ_CHECK(!json.empty() && json.front() == '{' && json.back() == '}');
  st_cli::print_tensor_table(rows, "extra");
  st_cli::print_type_totals(rows);
  return 0;
}
