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
  bool npz_limits = true;       ///< every input takes the .npz expansion limits
};

/// The format table's capabilities of `source`'s format (none for a source of no row).
format_options capabilities(const tensor_source& source) {
  const format_row* row = find_format(source.format_id());
  return row != nullptr ? row->takes : format_options{};
}

input_kind kind_of_input(const tensor_source& source) {
  const format_options takes = capabilities(source);
  return {source.format(), takes.pytorch_reading, takes.npz_limits};
}

/// An option that applies to some inputs or outputs only.
struct option_scope {
  std::string_view name;  ///< set_option's
  bool used;              ///< given, or its field is not the default
  bool applies;
  std::string_view where;  ///< "PyTorch", ".npz", ...
};

/// Options that do not apply to these inputs and this output are refused, never ignored,
/// named as the caller spells them.
status check_applicable(const convert_options& o, const input_kind& in, const format_row& out) {
  const auto used = [&](std::string_view name, bool differs) { return differs || o.given.contains(name); };
  const source_options read;
  const safetensors_layout layout;
  const option_scope input_scopes[] = {
      {"key", used("key", !o.read.key.empty()), in.pytorch_reading, "PyTorch"},
      {"shared", used("shared", o.read.shared != read.shared), in.pytorch_reading, "PyTorch"},
      {"strict", used("strict", o.read.strict), in.pytorch_reading, "PyTorch"},
      {"max_expanded_size", used("max_expanded_size", o.read.npz.max_expanded_bytes != read.npz.max_expanded_bytes),
       in.npz_limits, ".npz"},
      {"max_ratio", used("max_ratio", o.read.npz.max_compression_ratio != read.npz.max_compression_ratio),
       in.npz_limits, ".npz"},
  };
  for (const auto& option : input_scopes) {
    if (option.used && !option.applies) {
      return usage(
          fmt::format("{} applies to {} input only (the input is {})", o.names(option.name), option.where, in.format));
    }
  }
  const option_scope output_scopes[] = {
      {"compress", used("compress", o.compress), out.takes.compress, ".npz"},
      {"hash_long_names", used("hash_long_names", o.hash_long_names), out.takes.hash_long_names, "GGUF"},
      {"set_metadata", used("set_metadata", !o.metadata.set.empty()), out.takes.layout, "SafeTensors"},
      {"remove_metadata", used("remove_metadata", !o.metadata.remove.empty()), out.takes.layout, "SafeTensors"},
      {"alignment", used("alignment", o.layout.alignment != layout.alignment), out.takes.layout, "SafeTensors"},
      {"max_shard_size", used("max_shard_size", o.layout.max_shard_bytes != layout.max_shard_bytes), out.takes.shards,
       "sharded SafeTensors (a directory)"},
      {"prefix", used("prefix", o.layout.prefix != layout.prefix), out.takes.shards,
       "sharded SafeTensors (a directory)"},
  };
  for (const auto& option : output_scopes) {
    if (option.used && !option.applies) {
      return usage(
          fmt::format("{} applies to {} output only (the output is {})", o.names(option.name), option.where, out.name));
    }
  }
  if (o.cast) return {};
  for (const auto& [name, on] :
       {std::pair{"cast_only", !o.cast_only.only.empty()}, std::pair{"cast_exclude", !o.cast_only.exclude.empty()},
        std::pair{"saturate", o.saturate}}) {
    if (used(name, on)) return usage(fmt::format("{} needs a dtype to cast to ({})", o.names(name), o.names("dtype")));
  }
  return {};
}

/// `from` is empty (any input format) or "safetensors".
status check_from(const convert_options& options) {
  if (options.from.empty() || options.from == "safetensors") return {};
  return usage(fmt::format("{}: unknown input format '{}' (supported: safetensors; empty for any)",
                           options.names("from"), options.from));
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
  if (auto s = check_output_budget(total_bytes(*source), source->input_bytes(), options.max_output_bytes,
                                   options.names("max_output_size"));
      !s) {
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
  if (input.shape == convert_input::kind::url) {
    // Through the store the URL's scheme is served by: a SafeTensors file or checkpoint.
    if (input.remote->names_checkpoint()) {
      auto c = input.remote->open_checkpoint();
      if (!c) return std::move(c).err();
      return checkpoint_source(std::move(c).value(), read.on_warning);
    }
    auto f = input.remote->open_file();
    if (!f) return std::move(f).err();
    return safetensors_source(std::move(f).value());
  }
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
/// absent, not an input (unless replace_input), in a writable directory; a directory only
/// where a sharded output may go. A sharded output's files are checked by its sink once their
/// names are known.
result<const format_row*> checked_output(const std::string& out, std::span<const std::string> inputs,
                                         const convert_options& options) {
  // The output is checked first: a device or an input named as the output is reported as such,
  // whatever its name says about the format.
  const in_place rule = options.replace_input ? in_place::allow : in_place::refuse;
  const bool sharded = !options.one_file_output && (options.to == "sharded" || is_directory_path(out));
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
    auto input = resolve_convert_input(in, options.url);
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
    const input_kind one = kind_of_input(**source);
    if (kind.format.empty()) kind.format = one.format;
    kind.pytorch_reading = kind.pytorch_reading && one.pytorch_reading;
    kind.npz_limits = kind.npz_limits && one.npz_limits;
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
  if (auto s = check_applicable(options, kind_of_input(*source), **format); !s) return std::move(s).err();
  return run(std::move(source), out, **format, options, std::move(inputs), {});
}

}  // namespace safetensors::pipeline
