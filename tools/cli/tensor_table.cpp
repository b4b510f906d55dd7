// SPDX-License-Identifier: Apache-2.0
#include "tensor_table.h"

#include <algorithm>
#include <map>

#include <fmt/format.h>

#include "count_text.h"
#include "progress.h"
#include "report.h"

namespace st_cli {
namespace {

std::string trimmed(std::string s) {
  while (!s.empty() && s.back() == ' ') s.pop_back();
  return s;
}

}  // namespace

void print_tensor_table(std::span<const table_row> rows, std::string_view extra_title) {
  if (rows.empty()) return;
  std::size_t width = 4;
  std::vector<std::string> names;  // escaped once: the width is that of what is printed
  names.reserve(rows.size());
  for (const auto& r : rows) {
    names.push_back(printable_text(r.tensor.name));
    width = std::max(width, names.back().size());
  }
  width = std::min<std::size_t>(width, 80);
  fmt::print("\n{}\n", trimmed(fmt::format("{:<{}}  {:<11}  {:<20}  {:>14}  {}", "name", width, "dtype", "shape",
                                           "bytes", extra_title)));
  for (std::size_t i = 0; i < rows.size(); ++i) {
    const table_row& r = rows[i];
    fmt::print("{}\n",
               trimmed(fmt::format("{:<{}}  {:<11}  {:<20}  {:>14}  {}", names[i], width, printable_text(r.tensor.type),
                                   shape_text(r.tensor.shape), with_commas(r.tensor.bytes), printable_text(r.extra))));
  }
}

void print_type_totals(std::span<const table_row> rows) {
  struct totals {
    std::uint64_t tensors = 0, params = 0, bytes = 0;
  };
  std::map<std::string, totals> per_type;
  for (const auto& r : rows) {
    auto& d = per_type[r.tensor.type];
    ++d.tensors;
    d.params += r.tensor.params;
    d.bytes += r.tensor.bytes;
  }
  for (const auto& [type, d] : per_type) {
    fmt::print("  {:<12} {:>6} {:<7} {:>14} params  {:>12}\n", printable_text(type), with_commas(d.tensors),
               d.tensors == 1 ? "tensor" : "tensors", with_commas(d.params), human_bytes(d.bytes));
  }
}

std::vector<table_row> described_rows(const safetensors::pipeline::format_description& d) {
  std::vector<table_row> rows;
  rows.reserve(d.tensors.size());
  for (const auto& t : d.tensors) rows.push_back({{t.name, t.type, t.shape, t.bytes, t.elements}, t.extra});
  return rows;
}

void print_listing(const std::string& path, const safetensors::pipeline::format_description& listing) {
  const std::vector<table_row> rows = described_rows(listing);
  std::uint64_t params = 0;
  std::uint64_t bytes = 0;
  for (const auto& r : rows) {
    params += r.tensor.params;
    bytes += r.tensor.bytes;
  }
  fmt::print("file:        {}\n", printable_text(path));
  fmt::print("format:      {}\n", printable_text(listing.format));
  fmt::print("tensors:     {} ({} of data)\n", with_commas(rows.size()), human_bytes(bytes));
  fmt::print("parameters:  {}\n", with_commas(params));
  print_type_totals(rows);
  if (listing.metadata.empty()) {
    fmt::print("metadata:    none\n");
  } else {
    fmt::print("metadata:    {}\n", count_of(listing.metadata.size(), "key"));
    for (const auto& [k, v] : listing.metadata) fmt::print("  {}: {}\n", printable_text(k), v);
  }
  for (const auto& note : listing.notes) fmt::print("note:        {}\n", printable_text(note));
  print_tensor_table(rows, listing.extra_title);
}

}  // namespace st_cli
