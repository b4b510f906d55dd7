// SPDX-License-Identifier: Apache-2.0
// The conversion pipeline: any input the library reads (SafeTensors file or sharded
// checkpoint, PyTorch .pt/.bin or sharded directory, NumPy .npy/.npz, GGUF) to any output it
// writes (SafeTensors file or sharded directory, .npz, .npy, GGUF), in bounded memory:
// source -> selection and renames -> metadata edits -> optional cast -> progress -> sink.
// The output is checked before any byte is written (never an input, a device or a directory
// where a file goes) and appears complete or not at all. Every rewrite is this pipeline with
// options: `extract` (select, rename, metadata), `cast`, `merge` (a checkpoint into one file),
// `shard` (inputs into a sharded directory). The CLI, Python's `safetensors.cxx` and the C
// API call it.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <set>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/location.h"
#include "safetensors/pipeline/format_table.h"
#include "safetensors/pipeline/option_names.h"
#include "safetensors/pipeline/selection.h"
#include "safetensors/pipeline/tensor_filter.h"
#include "safetensors/pipeline/tensor_sink.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

struct convert_options {
  /// "safetensors", "npz", "npy" or "gguf"; empty: from the output's name (output_format_for).
  std::string to;
  /// "safetensors": every input must be SafeTensors (a file, directory or index), and another
  /// format is refused by name ("this is a GGUF file, not SafeTensors"); empty: any input
  /// format, as its bytes say.
  std::string from;
  /// Floating tensors (complex excepted) become this type; nullopt keeps each tensor's own
  /// (quantized GGUF blocks always become F32).
  std::optional<dtype> cast;
  tensor_filter cast_only;          ///< of the floating tensors, those cast (all when empty); needs `cast`
  bool saturate = false;            ///< F8 targets of `cast`: out-of-range values become the largest finite one
  tensor_filter select;             ///< the tensors written; the others are left out
  std::vector<rename_rule> rename;  ///< applied to the selected tensors, the first rule that applies
  metadata_edits metadata;          ///< SafeTensors output: `__metadata__` keys set and removed
  safetensors_layout layout;        ///< SafeTensors output: alignment; sharded: shard size and prefix
  /// The output may be the input file itself: it is replaced atomically once complete (the
  /// CLI's in-place `cast` and `extract`). Otherwise writing over an input is refused.
  bool replace_input = false;
  /// How URL inputs are reached (location.h: token, CA file, timeout): a URL of a SafeTensors
  /// file or checkpoint is an input like a path, through the store its scheme's provider gives.
  url_options url;
  /// PyTorch and .npz reading options; PyTorch ones given for another input are refused.
  source_options read;
  bool compress = false;         ///< .npz output: deflate members (refused for other outputs)
  bool hash_long_names = false;  ///< GGUF output: shorten names over 63 bytes (refused for others)
  progress_callback progress;    ///< bytes done / total; returning false cancels (error_code::cancelled)
  warning_handler on_warning;    ///< each warning as it happens; they are in the summary too
  /// The output budget (output_check.h): the most tensor bytes the output may hold; 0: the
  /// default, default_output_budget(the input's size). A plan above it is refused
  /// (LimitExceeded) before anything is written.
  std::uint64_t max_output_bytes = 0;
  /// The output is one file: a directory there is refused, not a sharded output (`cast`,
  /// `extract` and `merge`, from the CLI and Python).
  bool one_file_output = false;
  /// The options set_option set, by name (a flag set to false is not given). An option that
  /// does not apply to the input or the output is refused when given, even at its default
  /// value (the CLI's `--shared keep` for a SafeTensors input), and when its field differs
  /// from the default.
  std::set<std::string, std::less<>> given;
  /// How the caller spells the options: every message about an option names it so
  /// (set_option's and the checks'), "option 'key'" by default.
  option_names names = option_names::keys();
};

/// Sets one option from text, the one way every face sets options by name (the CLI's flags,
/// Python's keywords, the C API's keys), and records it in `options.given`: "to", "from",
/// "dtype" (a floating-point dtype), "saturate", "alignment", "max_shard_size" ("5GB"),
/// "prefix", "replace_input", "one_file_output", "key", "shared" ("keep"/"dedup"), "strict",
/// "compress", "hash_long_names" (booleans "1"/"0", "true"/"false"), "max_output_size" (the
/// output budget: bytes or "20GB"), "max_expanded_size" and "max_ratio" (.npz input's zip-bomb
/// limits: bytes or "4GiB", a number over 0), and the repeatable "only", "exclude",
/// "cast_only", "cast_exclude", "remove_metadata", "rename" ("FROM=TO") and "set_metadata"
/// ("KEY=VALUE"). InvalidArgument for an unknown name or a bad value, naming the option as
/// `options.names` spells it.
[[nodiscard]] status set_option(convert_options& options, std::string_view name, std::string_view value);

/// What a conversion did.
struct convert_summary {
  std::string input_format;            ///< "PyTorch", "SafeTensors (sharded)", ...
  const format_row* output = nullptr;  ///< the format table's row written (format_table.h)
  std::size_t tensors = 0;
  std::uint64_t parameters = 0;  ///< elements of every tensor written
  std::uint64_t bytes = 0;       ///< tensor bytes written
  std::vector<std::string> notes;
  std::vector<std::string> warnings;
  std::vector<std::string> files;  ///< written: the output, or a sharded output's shards then index
};

/// Converts the file, directory or index `in` into `out`. Errors name the file they are
/// about; nothing is left at `out` after a failure or a cancellation.
[[nodiscard]] result<convert_summary> convert(const std::string& in, const std::string& out,
                                              const convert_options& options = {});

/// The tensors of every one of `ins` (files, directories or indexes), one input after the
/// other, into `out`; `__metadata__` is what the inputs share (a warning names dropped keys).
[[nodiscard]] result<convert_summary> convert(std::span<const std::string> ins, const std::string& out,
                                              const convert_options& options = {});

/// Converts an opened source (a remote SafeTensors file, a custom reader) into `out`;
/// `inputs` are the files it reads (none may be overwritten). `options.read` is not used.
[[nodiscard]] result<convert_summary> convert(source_ptr source, const std::string& out,
                                              const convert_options& options = {},
                                              std::vector<std::string> inputs = {});

}  // namespace safetensors::pipeline
