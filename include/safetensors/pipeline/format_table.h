// SPDX-License-Identifier: Apache-2.0
// The formats the pipelines know, one row each: the id options name it by, the name messages
// use, its file extensions, how its first bytes are recognised, how it is read as a
// tensor_source, how it is written as a tensor_sink, and how `inspect` describes a file of
// it (the same rows for the CLI, Python and C). open_source, output_format_for, make_sink
// and convert look formats up here, by id or capability, never by display name. A format
// is one folder (its reader, writer and describer) and one row: built-in rows are listed in
// format_table.cpp; a program adds its own with register_format.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/pipeline/tensor_sink.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

/// One tensor as `inspect` lists it.
struct described_tensor {
  std::string name;
  std::string type;  ///< "F32", or the format's own ("Q8_0")
  std::vector<std::uint64_t> shape;
  std::uint64_t bytes = 0;
  std::uint64_t elements = 0;
  std::string extra;  ///< the format's last column (offset, descr, notes)
  /// Where the bytes lie in the file when they are SafeTensors bytes as stored (uncompressed,
  /// one C-order run, little-endian, a SafeTensors dtype): what a viewer reads to show values.
  struct plain_bytes {
    std::uint64_t offset = 0;  ///< absolute, in the file
    std::uint64_t length = 0;
    dtype type = dtype::F32;
  };
  std::optional<plain_bytes> data;
  std::string no_data;  ///< when `data` is empty: why, in a few words ("quantized type Q8_0")
};

/// How a description is wanted: rows to print, or one JSON object (inspect --json).
enum class description_style : std::uint8_t { rows, json };

/// A file as `inspect` shows it. Text is raw as the file has it, except metadata values,
/// which the describer makes printable itself (printable_text: escaped, cut to one line).
struct format_description {
  std::string format;                                         ///< the "format:" line
  std::string extra_title;                                    ///< the table's last column
  std::vector<described_tensor> tensors;                      ///< in file order
  std::vector<std::pair<std::string, std::string>> metadata;  ///< key (raw) and value (printable)
  std::vector<std::string> notes;                             ///< skipped entries, verdicts
  std::string json;                                           ///< description_style::json: the whole description
  /// Set when the file was looked at but does not open (a pickle that would run code): the
  /// notes (rows) or the JSON say why, and the caller fails with this error after showing them.
  std::optional<error> refusal;
};

/// Which of convert's format-specific options a format takes; convert refuses the others.
struct format_options {
  bool pytorch_reading = false;  ///< source_options' key, shared and strict
  bool npz_limits = false;       ///< source_options' npz limits (max_expanded_size, max_ratio)
  bool compress = false;         ///< sink_options::compress
  bool hash_long_names = false;  ///< sink_options::hash_long_names
  bool layout = false;           ///< `__metadata__` edits and the alignment (safetensors_layout)
  bool shards = false;           ///< shard size and prefix
};

/// One format. Every function may be empty: a format that is only read has no make_sink.
struct format_row {
  std::string id;                       ///< what convert's `to` names: "gguf", "sharded"
  std::string name;                     ///< for messages and summaries: "GGUF", "SafeTensors (sharded)"
  std::vector<std::string> extensions;  ///< lower case, with the dot: ".gguf"; the first is the one to write
  /// True when a file's first bytes (up to sniff_prefix_bytes) are this format. Empty for a
  /// format without magic bytes: a file that no row's sniff claims is then chosen by extension.
  std::function<bool(std::span<const std::byte> prefix)> sniff;
  std::function<result<source_ptr>(const std::string& path, const source_options& options)> open;
  std::function<sink_ptr(const std::string& path, const sink_options& options)> make_sink;
  /// Empty where inspect reads the file otherwise (SafeTensors: the core's header).
  std::function<result<format_description>(const std::string& path, description_style style)> describe;
  format_options takes;
};

/// Adds a row after the built-in ones. InvalidArgument for an empty id or one already taken.
/// Call it before the pipelines run on other threads (lookups take the same lock, but a
/// conversion that already chose its formats does not see a later row).
[[nodiscard]] status register_format(format_row row);

/// Every row, the built-in ones first, in the order messages list them.
[[nodiscard]] std::vector<const format_row*> formats();

/// The row with `id`, or nullptr.
[[nodiscard]] const format_row* find_format(std::string_view id);

/// The row for the file at `path`: the one whose sniff claims its first bytes, else a row
/// without magic bytes whose extension ends the name; nullptr when none does. Errors: IoError.
[[nodiscard]] result<const format_row*> format_of_file(const std::string& path);

}  // namespace safetensors::pipeline
