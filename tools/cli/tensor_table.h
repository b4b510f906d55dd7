// SPDX-License-Identifier: Apache-2.0
// The tensor table and per-type totals `inspect` prints for every format, so a PyTorch,
// NumPy or GGUF file reads like a SafeTensors one (and `inspect --tree` works on all).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/pipeline/format_table.h"
#include "tree.h"

namespace st_cli {

/// One row: the tree's tensor and the format's own last column (offsets, shard, notes).
struct table_row {
  tree_tensor tensor;
  std::string extra;
};

/// "name  dtype  shape  bytes  <extra_title>" and one line per row, names and extra escaped.
void print_tensor_table(std::span<const table_row> rows, std::string_view extra_title);

/// "  F32     3 tensors   1,234 params   4.8 KiB", one line per type in `order`.
void print_type_totals(std::span<const table_row> rows);

/// A described file's tensors (the format table's describe rows) as table rows.
[[nodiscard]] std::vector<table_row> described_rows(const safetensors::pipeline::format_description& d);

/// A non-SafeTensors file as the format table describes it (format_table.h): file:, format:,
/// tensors:, parameters:, per-type totals, metadata, notes, then the table.
void print_listing(const std::string& path, const safetensors::pipeline::format_description& listing);

}  // namespace st_cli
