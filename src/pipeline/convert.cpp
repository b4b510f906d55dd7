// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/convert.h"

#include <fmt/format.h>

#include "safetensors/pipeline/convert_input.h"
#include "safetensors/pipeline/format_table.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/sniff.h"
#include "usage_error.h"

namespace safetensors::pipeline {
namespace {

using detail::usage;

/// What the option checks need to know about the inputs.
struct input_kind {
  std::string format;           ///< the first input's: "PyTorch", "SafeTensors (sharded)", ...
  bool pytorch_reading = true;  ///< every input takes the PyTorch reading options
};

/// The format table's capabilities of `source`'s format (none for a source of no row).
format_options capabilities(const tensor_source& source) {
  const format_row* row = find_format(source.format_id());
  return row != nullptr ? row->takes : format_options{};
}

/// Options that do not apply to these inputs and this output are refused, never ignored.
status check_applicable(const convert_options& options, const input_kind& in, const format_row& out) {
  const auto pytorch_only = [&](bool given, std::string_view option) -> status {
    if (!given || in.pytorch_reading) return {};
    return usage(fmt::format("{} applies to PyTorch input only (the input is {})", option, in.format));
  };
  if (auto s = pytorch_only(!options.read.key.empty(), "the key option"); !s) return s;
  if (auto s = pytorch_only(options.read.shared != shared_tensors::keep, "deduplicating shared tensors"); !s) return s;
  if (auto s = pytorch_only(options.read.strict, "strict reading"); !s) return s;
  const auto output_only = [&](bool given, bool applies, std::string_view option, std::string_view which) -> status {
    if (!given || applies) return {};
    return usage(fmt::format("{} applies to {} output only (the output is {})", option, which, out.name));
  };
  const safetensors_layout plain;
  for (auto s :
       {output_only(options.compress, out.takes.compress, "compression", ".npz"),
        output_only(options.hash_long_names, out.takes.hash_long_names, "hashing long names", "GGUF"),
        output_only(!options.metadata.empty(), out.takes.layout, "editing __metadata__", "SafeTensors"),
        output_only(options.layout.alignment != plain.alignment, out.takes.layout, "an alignment", "SafeTensors"),
        output_only(options.layout.max_shard_bytes != 0 || options.layout.prefix != plain.prefix, out.takes.shards,
                    "a shard size or prefix", "sharded SafeTensors (a directory)")}) {
    if (!s) return s;
  }
  if (!options.cast && (!options.cast_only.selects_all() || options.saturate)) {
    return usage("choosing the tensors to cast, or saturating, needs a dtype to cast to");
  }
  return {};
}

/// `from` is empty (any input format) or "safetensors".
status check_from(const convert_options& options) {
  if (options.from.empty() || options.from == "safetensors") return {};
  return usage(fmt::format("from: unknown input format '{}' (supported: safetensors; empty for any)", options.from));
}

/// Keeps every warning for the summary and passes each on as it happens.
warning_handler collecting(std::vector<std::string>& into, const warning_handler& also) {
  return [&into, also](std::string_view message) {
    into.emplace_back(message);
    if (also) also(message);
  };
}

/// source -> selection -> metadata -> cast -> progress -> sink.
result<convert_summary> run(source_ptr source, const std::string& out, const format_row& format,
                            const convert_options& options, std::vector<std::string> inputs,
                            std::vector<std::string> warnings) {
  convert_summary summary;
  summary.input_format = source->format();
  summary.output = &format;
  auto selected = select_source(std::move(source), options.select, options.rename);
  if (!selected) return std::move(selected).err();
  auto edited = edit_metadata(std::move(selected).value(), options.metadata);
  if (!edited) return std::move(edited).err();
  source = std::move(edited).value();
  if (options.cast) {
    auto cast = cast_source(std::move(source), *options.cast, options.cast_only, {.saturate = options.saturate});
    if (!cast) return std::move(cast).err();
    source = std::move(cast).value();
  }
  // The plan is complete: refuse an amplifying one before the sink creates anything.
  if (auto s = check_output_budget(total_bytes(*source), source->input_bytes(), options.max_output_bytes); !s) {
    return std::move(s).err().with_path(out);
  }
  source = observed_source(std::move(source), options.progress);
  auto sink = format.make_sink(out, {.compress = options.compress,
                                     .hash_long_names = options.hash_long_names,
                                     .layout = options.layout,
                                     .inputs = std::move(inputs),
                                     .on_warning = collecting(warnings, options.on_warning)});
  if (!sink) return make_error(error_code::unsupported, fmt::format("{} gave no writer", format.name)).with_path(out);
  if (auto s = sink->write(*source); !s) return std::move(s).err().with_path(out);
  summary.tensors = source->tensors().size();
  for (const auto& t : source->tensors()) summary.parameters += t.element_count();
  summary.bytes = total_bytes(*source);
  summary.notes = source->notes();
  summary.warnings = std::move(warnings);
  summary.files = sink->files();
  return summary;
}

/// A resolved input as a source, its format sniffed once (SafeTensors only with `from`, checked).
result<source_ptr> open_input(const convert_input& input, const convert_options& options, const source_options& read) {
  if (options.from.empty()) {
    return input.shape == convert_input::kind::safetensors_sharded ? open_checkpoint_source(input.path, read.on_warning)
                                                                   : open_source(input.path, read);
  }
  switch (input.shape) {
    case convert_input::kind::safetensors_sharded: return open_checkpoint_source(input.path, read.on_warning);
    case convert_input::kind::pytorch_sharded:
      return make_error(error_code::invalid_format, "this is a sharded PyTorch checkpoint, not SafeTensors")
          .with_path(input.path);
    default: break;
  }
  auto source = open_safetensors_source(input.path);
  if (!source) return explain_format_error(std::move(source).err().with_path(input.path));
  return source;
}

/// The output format, after the check made before any byte is written: the output is a file or
/// absent, not an input (unless replace_input), in a writable directory. A sharded output's
/// files are checked by its sink once their names are known.
result<const format_row*> checked_output(const std::string& out, std::span<const std::string> inputs,
                                         const convert_options& options) {
  // The output is checked first: a device or an input named as the output is reported as such,
  // whatever its name says about the format.
  const in_place rule = options.replace_input ? in_place::allow : in_place::refuse;
  const bool sharded = options.to == "sharded" || is_directory_path(out);
  if (auto s = sharded ? check_output_dir(out) : check_output(out, inputs, rule); !s) return std::move(s).err();
  return output_format_for(out, options.to);
}

}  // namespace

result<convert_summary> convert(std::span<const std::string> ins, const std::string& out,
                                const convert_options& options) {
  if (ins.empty()) return usage("nothing to convert: no input given");
  if (auto s = check_from(options); !s) return std::move(s).err();
  std::vector<convert_input> inputs;
  std::vector<std::string> files;
  for (const auto& in : ins) {
    auto input = resolve_convert_input(in);
    if (!input) return std::move(input).err();
    files.insert(files.end(), input->files.begin(), input->files.end());
    inputs.push_back(std::move(input).value());
  }
  auto format = checked_output(out, files, options);
  if (!format) return std::move(format).err();
  std::vector<std::string> warnings;
  source_options read = options.read;
  read.on_warning = collecting(warnings, options.on_warning);
  std::vector<source_ptr> sources;
  input_kind kind;
  for (const auto& input : inputs) {
    auto source = open_input(input, options, read);
    if (!source) return std::move(source).err();
    if (kind.format.empty()) kind.format = (*source)->format();
    kind.pytorch_reading = kind.pytorch_reading && capabilities(**source).pytorch_reading;
    sources.push_back(std::move(source).value());
  }
  if (auto s = check_applicable(options, kind, **format); !s) return std::move(s).err();
  return run(concat_sources(std::move(sources), read.on_warning), out, **format, options, std::move(files),
             std::move(warnings));
}

result<convert_summary> convert(const std::string& in, const std::string& out, const convert_options& options) {
  return convert(std::span(&in, 1), out, options);
}

result<convert_summary> convert(source_ptr source, const std::string& out, const convert_options& options,
                                std::vector<std::string> inputs) {
  if (auto s = check_from(options); !s) return std::move(s).err();
  auto format = checked_output(out, inputs, options);
  if (!format) return std::move(format).err();
  const bool safetensors = source->format_id() == "safetensors" || source->format_id() == "sharded";
  if (!options.from.empty() && !safetensors) {
    return make_error(error_code::invalid_format, fmt::format("the input is {}, not SafeTensors", source->format()));
  }
  if (auto s = check_applicable(options, {source->format(), capabilities(*source).pytorch_reading}, **format); !s) {
    return std::move(s).err();
  }
  return run(std::move(source), out, **format, options, std::move(inputs), {});
}

}  // namespace safetensors::pipeline
