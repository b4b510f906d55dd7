// SPDX-License-Identifier: Apache-2.0
#include "pipeline_run.h"

#include "input.h"
#include "progress.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/checkpoint_write.h"

namespace st_cli {

namespace sp = safetensors::pipeline;

safetensors::result<std::uint64_t> max_output_bytes(const std::string& text) {
  if (text.empty()) return std::uint64_t{0};
  auto bytes = safetensors::parse_byte_size(text);
  if (!bytes) return usage_error("--max-output-size: " + bytes.err().message);
  return bytes;
}

safetensors::result<sp::convert_summary> run_pipeline(std::span<const std::string> ins, const std::string& out,
                                                      sp::convert_options options, std::string_view label, bool quiet,
                                                      command_io io) {
  pipeline_progress bar(std::string(label), quiet);
  options.progress = bar.callback();
  options.on_warning = print_warning;
  options.url = command_url_options();
  auto summary = [&]() -> safetensors::result<sp::convert_summary> {
    // A URL is an input like a path: the pipeline resolves it through the location door.
    for (const auto& in : ins) warn_if_insecure(in);
    const bool one_file = ins.size() == 1 && io.one_input_file;
    options.one_file_output = io.file_output;
    if (!one_file) {
      if (io.safetensors_only) options.from = "safetensors";
      return sp::convert(ins, out, options);
    }
    auto f = open_input(ins.front());
    if (!f) return std::move(f).err();
    std::vector<std::string> read;
    if (!is_url(ins.front())) read.push_back(ins.front());
    return sp::convert(sp::safetensors_source(std::move(f).value()), out, options, std::move(read));
  }();
  bar.finish();
  return summary;
}

}  // namespace st_cli
