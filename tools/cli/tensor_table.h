// SPDX-License-Identifier: Apache-2.0
// The tensor table and per-type totals `inspect` prints for every format, so a PyTorch,
// NumPy or GGUF file reads like a SafeTensors one (and `inspect --tree` works on all).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

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

/// A non-SafeTensors file as inspect shows it. Text is raw, as the file has it (print_listing
/// escapes it), except the metadata values, which the format's lister makes printable itself
/// (printable_text: escaped, and cut so that each key stays one line).
struct file_listing {
  std::string format;                                         ///< the "format:" line
  std::vector<table_row> rows;                                ///< tensors in file order
  std::string extra_title;                                    ///< the table's last column
  std::vector<std::pair<std::string, std::string>> metadata;  ///< key (raw) and value (printable)
  std::vector<std::string> notes;                             ///< skipped entries
};

/// file:, format:, tensors:, parameters:, per-type totals, metadata, notes, then the table.
void print_listing(const std::string& path, const file_listing& listing);

}  // namespace st_cli
