// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/convert.h"

#include <fmt/format.h>

#include "safetensors/pipeline/convert_input.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/sniff.h"

namespace safetensors::pipeline {
namespace {

error usage(std::string message) { return make_error(error_code::invalid_argument, std::move(message)); }

/// Options that do not apply to this input and output are refused, never ignored.
status check_applicable(const convert_options& options, const std::string& input_format, bool pytorch,
                        output_format out) {
  const auto pytorch_only = [&](bool given, std::string_view option) -> status {
    if (!given || pytorch) return {};
    return usage(fmt::format("{} applies to PyTorch input only (the input is {})", option, input_format));
  };
  if (auto s = pytorch_only(!options.read.key.empty(), "the key option"); !s) return s;
  if (auto s = pytorch_only(options.read.shared != shared_tensors::keep, "deduplicating shared tensors"); !s) return s;
  if (auto s = pytorch_only(options.read.strict, "strict reading"); !s) return s;
  if (options.compress && out != output_format::npz) {
    return usage(fmt::format("compression applies to .npz output only (the output is {})", output_format_name(out)));
  }
  if (options.hash_long_names && out != output_format::gguf) {
    return usage(
        fmt::format("hashing long names applies to GGUF output only (the output is {})", output_format_name(out)));
  }
  return {};
}

/// Keeps every warning for the summary and passes each on as it happens.
warning_handler collecting(std::vector<std::string>& into, const warning_handler& also) {
  return [&into, also](std::string_view message) {
    into.emplace_back(message);
    if (also) also(message);
  };
}

result<convert_summary> run(source_ptr source, const std::string& out, output_format format,
                            const convert_options& options, std::vector<std::string> inputs,
                            std::vector<std::string> warnings) {
  convert_summary summary;
  summary.input_format = source->format();
  summary.output = format;
  if (options.cast) source = cast_source(std::move(source), *options.cast);
  source = observed_source(std::move(source), options.progress);
  auto sink = make_sink(format, out,
                        {.compress = options.compress,
                         .hash_long_names = options.hash_long_names,
                         .inputs = std::move(inputs),
                         .on_warning = collecting(warnings, options.on_warning)});
  if (auto s = sink->write(*source); !s) return std::move(s).err().with_path(out);
  summary.tensors = source->tensors().size();
  for (const auto& t : source->tensors()) summary.parameters += t.element_count();
  summary.bytes = total_bytes(*source);
  summary.notes = source->notes();
  summary.warnings = std::move(warnings);
  return summary;
}

}  // namespace

result<convert_summary> convert(const std::string& in, const std::string& out, const convert_options& options) {
  auto input = resolve_convert_input(in);
  if (!input) return std::move(input).err();
  // First, before any byte is written: the output is a file or absent, not an input, in a writable
  // directory (a sharded output's files are checked by its sink once their names are known).
  if (auto s = check_convert_output(out, *input); !s) return std::move(s).err();
  auto format = output_format_for(out, options.to);
  if (!format) return std::move(format).err();
  bool pytorch = input->shape == convert_input::kind::pytorch_sharded;
  std::string input_format = pytorch ? "PyTorch" : "SafeTensors";
  if (input->shape == convert_input::kind::file) {
    auto sniffed = sniff_file(input->path);
    if (!sniffed) return std::move(sniffed).err().with_path(input->path);
    input_format = std::string(file_format_name(*sniffed));
    pytorch = *sniffed == file_format::pytorch_zip || *sniffed == file_format::pickle;
  }
  if (auto s = check_applicable(options, input_format, pytorch, *format); !s) return std::move(s).err();

  std::vector<std::string> warnings;
  source_options read = options.read;
  read.on_warning = collecting(warnings, options.on_warning);
  auto source = input->shape == convert_input::kind::safetensors_sharded ? open_checkpoint_source(input->path)
                                                                         : open_source(input->path, read);
  if (!source) return std::move(source).err();
  return run(std::move(source).value(), out, *format, options, std::move(input->files), std::move(warnings));
}

result<convert_summary> convert(source_ptr source, const std::string& out, const convert_options& options,
                                std::vector<std::string> inputs) {
  const bool directory = is_directory_path(out);
  if (auto s = directory ? check_output_dir(out) : check_output(out, inputs); !s) return std::move(s).err();
  auto format = output_format_for(out, options.to);
  if (!format) return std::move(format).err();
  if (auto s = check_applicable(options, source->format(), source->format() == "PyTorch", *format); !s) {
    return std::move(s).err();
  }
  return run(std::move(source), out, *format, options, std::move(inputs), {});
}

}  // namespace safetensors::pipeline
