// SPDX-License-Identifier: Apache-2.0
// Running the library's conversion pipeline from a subcommand (convert, cast, extract, merge,
// shard): inputs given as paths or a URL, a progress bar on stderr (unless --quiet), each
// warning printed as it happens.
#pragma once

#include <span>
#include <string>
#include <string_view>

#include "safetensors/pipeline/convert.h"

namespace st_cli {

/// What a subcommand accepts as input and writes.
struct command_io {
  bool safetensors_only = false;  ///< a file of another format is named as such ("this is a GGUF file")
  bool one_input_file = false;    ///< one SafeTensors file (or URL), not a checkpoint: cast, extract
  bool file_output = false;       ///< one output file: a directory there is an error, not a sharded output
};

/// The value of --max-output-size as bytes; 0 (the default budget) when it was not given.
/// For the MLX rewrites, whose options are not convert_options (the other commands set it
/// through option_flags).
[[nodiscard]] safetensors::result<std::uint64_t> max_output_bytes(const std::string& text);

/// pipeline::convert of `ins` into `out`. A URL (one input) is read over HTTP as SafeTensors.
/// `options.progress` and `options.on_warning` are set here: a bar labelled `label`, warnings
/// on stderr.
[[nodiscard]] safetensors::result<safetensors::pipeline::convert_summary> run_pipeline(
    std::span<const std::string> ins, const std::string& out, safetensors::pipeline::convert_options options,
    std::string_view label, bool quiet, command_io io = {});

}  // namespace st_cli
