// SPDX-License-Identifier: Apache-2.0
// The library's pipelines for Python (safetensors/_pipelines.py wraps them): `convert` with
// every option of the rewrites (cast, extract, merge and shard are convert with options),
// `diff` and `checksum`. The work runs without the GIL; the progress callback and Ctrl-C
// checks take it back between chunks, and either can stop the run (nothing is left at the output).
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "convert_options.h"
#include "errors.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/pipeline/checksum.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/pipeline/diff.h"
#include "safetensors/pipeline/format_table.h"
#include "safetensors/pipeline/mlx_rewrite.h"

namespace py = pybind11;
namespace sp = safetensors::pipeline;

namespace st_python {
namespace {

safetensors::dtype dtype_named(const std::string& name) {
  auto parsed = safetensors::parse_dtype(name);
  if (!parsed) fail_argument("unknown dtype '" + name + "'");
  return *parsed;
}

}  // namespace

/// The options a Python call spells as keyword arguments, gathered in a dict by _pipelines.py,
/// set by name as the C API sets them (set_option: one mapping of names to fields). None
/// leaves the default; lists repeat the option. `rename` (pairs) and `set_metadata` (a dict)
/// are set directly, since "FROM=TO" text cannot carry a pattern or key containing '='.
sp::convert_options convert_options_from(const py::dict& given) {
  sp::convert_options options;
  options.names = sp::option_names::keywords();  // messages name max_output_size=, not option 'max_output_size'
  const auto set = [&](const std::string& name, const std::string& value) {
    check(sp::set_option(options, name, value));
  };
  for (const auto& [key, value] : given) {
    const auto name = key.cast<std::string>();
    if (value.is_none()) continue;
    if (name == "rename") {
      for (const auto& [from, to] : value.cast<std::vector<std::pair<std::string, std::string>>>()) {
        options.rename.push_back(unwrap(sp::rename_rule::make(from, to)));
      }
    } else if (name == "set_metadata") {
      for (const auto& [k, v] : value.cast<std::map<std::string, std::string>>()) options.metadata.set[k] = v;
    } else if (py::isinstance<py::bool_>(value)) {
      set(name, value.cast<bool>() ? "true" : "false");
    } else if (py::isinstance<py::list>(value) || py::isinstance<py::tuple>(value)) {
      for (const auto& item : value) set(name, py::str(item).cast<std::string>());
    } else {
      set(name, py::str(value).cast<std::string>());
    }
  }
  return options;
}

namespace {

/// Runs `work` without the GIL, with `progress` (and Ctrl-C) consulted between chunks. An
/// exception raised there is kept and raised again once the pipeline has cleaned up.
template <class Work>
auto run_released(const py::object& progress, Work work) {
  std::optional<py::error_already_set> raised;
  sp::progress_callback callback = [&](std::uint64_t done, std::uint64_t total) {
    py::gil_scoped_acquire gil;
    try {
      if (PyErr_CheckSignals() != 0) throw py::error_already_set();
      if (!progress.is_none()) progress(done, total);
      return true;
    } catch (py::error_already_set& e) {
      raised.emplace(std::move(e));
      return false;
    }
  };
  auto outcome = [&] {
    py::gil_scoped_release release;
    return work(std::move(callback));
  }();
  if (raised) throw std::move(*raised);
  return unwrap(std::move(outcome));
}

py::dict convert_summary_dict(const sp::convert_summary& s) {
  py::dict d;
  d["input_format"] = s.input_format;
  d["output_format"] = s.output->name;
  d["tensors"] = s.tensors;
  d["parameters"] = s.parameters;
  d["bytes"] = s.bytes;
  d["notes"] = s.notes;
  d["warnings"] = s.warnings;
  d["files"] = s.files;
  return d;
}

py::dict convert(const std::vector<std::string>& inputs, const std::string& out, const py::dict& given,
                 const py::object& progress) {
  sp::convert_options options = convert_options_from(given);
  auto summary = run_released(progress, [&](sp::progress_callback callback) {
    options.progress = std::move(callback);
    return sp::convert(inputs, out, options);
  });
  return convert_summary_dict(summary);
}

py::object optional_text(const std::optional<std::string>& s) { return s ? py::object(py::str(*s)) : py::none(); }

py::dict diff_dict(const sp::diff_report& r) {
  py::list metadata;
  for (const auto& m : r.metadata) {
    py::dict d;
    d["key"] = m.key;
    d["a"] = optional_text(m.a);
    d["b"] = optional_text(m.b);
    metadata.append(d);
  }
  py::list tensors;
  for (const auto& t : r.tensors) {
    py::dict d;
    d["name"] = t.name;
    d["equal"] = !t.differs();
    d["dtype_a"] = std::string(safetensors::dtype_name(t.type_a));
    d["dtype_b"] = std::string(safetensors::dtype_name(t.type_b));
    d["shape_a"] = t.shape_a;
    d["shape_b"] = t.shape_b;
    d["compared"] = t.compared;
    d["values"] = t.values;
    d["mismatched"] = t.mismatched;
    d["max_abs"] = t.compared ? py::object(py::float_(t.max_abs)) : py::none();
    d["max_rel"] = t.compared ? py::object(py::float_(t.max_rel)) : py::none();
    d["first_mismatch"] =
        t.mismatched > 0 ? py::object(py::make_tuple(t.first_index, t.first_a, t.first_b)) : py::none();
    tensors.append(d);
  }
  py::dict out;
  out["equal"] = r.equal();
  out["only_in_a"] = r.only_in_a;
  out["only_in_b"] = r.only_in_b;
  out["metadata"] = metadata;
  out["tensors"] = tensors;
  return out;
}

py::dict diff(const std::string& a, const std::string& b, double rtol, double atol, bool ignore_dtype,
              const py::object& progress) {
  sp::diff_options options;
  options.rtol = rtol;
  options.atol = atol;
  options.ignore_dtype = ignore_dtype;
  auto report = run_released(progress, [&](sp::progress_callback callback) {
    options.progress = std::move(callback);
    return sp::diff(a, b, options);
  });
  return diff_dict(report);
}

py::dict checksum(const std::string& path, bool per_tensor, const py::object& progress) {
  auto digest = run_released(progress, [&](sp::progress_callback callback) {
    return sp::checksum(path, {.per_tensor = per_tensor, .progress = std::move(callback)});
  });
  py::dict tensors;  // in file order
  for (const auto& t : digest.tensors) tensors[py::str(t.name)] = t.sha256;
  py::dict out;
  out["sha256"] = digest.sha256;
  out["bytes"] = digest.bytes;
  out["tensors"] = tensors;
  return out;
}

/// max_output_size as bytes: "" keeps the default budget (0); a bad size names the keyword, as convert's does.
std::uint64_t output_budget(const std::string& text) {
  if (text.empty()) return 0;
  auto bytes = safetensors::parse_byte_size(text);
  if (!bytes) fail_argument("max_output_size=: " + bytes.err().message);
  return *bytes;
}

py::dict mlx_summary_dict(const sp::mlx_rewrite_summary& s) {
  py::dict d;
  d["layers"] = s.layers;
  d["tensors"] = s.tensors;
  d["sharded"] = s.sharded;
  d["warnings"] = s.warnings;
  return d;
}

py::dict quantize_checkpoint(const std::string& in, const std::string& out, const std::string& mode, unsigned bits,
                             unsigned group_size, const std::vector<std::string>& only,
                             const std::vector<std::string>& exclude, const std::string& config_out,
                             const std::string& max_shard_size, const std::string& max_output_size,
                             const py::object& progress) {
  sp::quantize_options options;
  const auto parsed = safetensors::mlx::parse_mode(mode);
  if (!parsed) fail_argument("unknown mode '" + mode + "': use affine, mxfp4, mxfp8 or nvfp4");
  options.params = safetensors::mlx::default_params(*parsed);
  if (bits != 0) options.params.bits = bits;
  if (group_size != 0) options.params.group_size = group_size;
  options.select = {only, exclude};
  options.config_out = config_out;
  options.max_shard_bytes = unwrap(safetensors::parse_byte_size(max_shard_size));
  options.max_output_bytes = output_budget(max_output_size);
  auto summary = run_released(progress, [&](sp::progress_callback callback) {
    options.progress = std::move(callback);
    return sp::quantize(in, out, options);
  });
  return mlx_summary_dict(summary);
}

py::dict dequantize_checkpoint(const std::string& in, const std::string& out, const std::optional<std::string>& dtype,
                               const std::string& max_shard_size, const std::string& max_output_size,
                               const py::object& progress) {
  sp::dequantize_options options;
  if (dtype) options.to = dtype_named(*dtype);
  options.max_shard_bytes = unwrap(safetensors::parse_byte_size(max_shard_size));
  options.max_output_bytes = output_budget(max_output_size);
  auto summary = run_released(progress, [&](sp::progress_callback callback) {
    options.progress = std::move(callback);
    return sp::dequantize(in, out, options);
  });
  return mlx_summary_dict(summary);
}

/// None, or an error as {"code", "message", "offset"}.
py::object refusal_dict(const std::optional<safetensors::error>& refusal) {
  if (!refusal) return py::none();
  py::dict out;
  out["code"] = std::string(safetensors::error_code_name(refusal->code));
  out["message"] = refusal->to_string();
  out["offset"] = refusal->offset ? py::object(py::int_(*refusal->offset)) : py::object(py::none());
  return out;
}

// What a PyTorch file's pickles name outside the allowlist (pickle_verdict.h), also for a
// file convert refuses: {"kind", "globals": [...], "refusal": None or {"code", "message", "offset"}}.
py::dict pickle_verdict(const std::string& path) {
  safetensors::torch::checkpoint_audit audit;
  {
    py::gil_scoped_release unlocked;
    audit = safetensors::torch::audit_checkpoint(path);
  }
  py::list globals;
  for (const auto& g : audit.verdict.globals) {
    py::dict d;
    d["name"] = g.name;
    d["runs_code"] = g.runs_code;
    d["pickle"] = g.pickle;
    d["offset"] = g.offset;
    d["opcode"] = g.opcode;
    d["times_named"] = g.times_named;
    d["calls"] = g.calls;
    d["first_call"] = g.calls != 0 ? py::object(py::str(g.first_call)) : py::object(py::none());
    d["first_call_offset"] = g.calls != 0 ? py::object(py::int_(g.first_call_offset)) : py::object(py::none());
    globals.append(std::move(d));
  }
  py::dict out;
  out["kind"] = std::string(safetensors::torch::pickle_verdict_name(audit.verdict.kind()));
  out["globals"] = std::move(globals);
  out["refusal"] = refusal_dict(audit.refusal);
  return out;
}

// A file as `inspect` describes it: its format table row's describer (format_table.h), the
// rows the CLI prints, as a dict. A format the table does not describe (SafeTensors, read with
// safe_open) raises SafetensorError.
py::dict describe(const std::string& path) {
  std::optional<safetensors::result<sp::format_description>> described;
  const sp::format_row* row = nullptr;
  {
    py::gil_scoped_release unlocked;
    auto found = sp::format_of_file(path);
    if (!found) {
      described = std::move(found).err().with_path(path);
    } else if (*found == nullptr || !(*found)->describe) {
      described = safetensors::make_error(safetensors::error_code::unsupported,
                                          *found == nullptr ? "not a format the library describes"
                                                            : (*found)->name +
                                                                  " files are read with safe_open, "
                                                                  "not described")
                      .with_path(path);
    } else {
      row = *found;
      described = row->describe(path, sp::description_style::rows);
    }
  }
  const sp::format_description d = unwrap(std::move(*described));
  // Names read from a file need not be UTF-8 (a pickle's, a GGUF's): undecodable bytes become U+FFFD.
  const auto text = [](const std::string& raw) { return py::bytes(raw).attr("decode")("utf-8", "replace"); };
  py::list tensors;
  for (const auto& t : d.tensors) {
    py::dict one;
    one["name"] = text(t.name);
    one["dtype"] = t.type;
    one["shape"] = t.shape;
    one["bytes"] = t.bytes;
    one["elements"] = t.elements;
    one["extra"] = text(t.extra);
    tensors.append(std::move(one));
  }
  py::dict metadata;
  for (const auto& [key, value] : d.metadata) metadata[text(key)] = text(value);
  py::list notes;
  for (const auto& note : d.notes) notes.append(text(note));
  py::dict out;
  out["format_id"] = row->id;
  out["format"] = text(d.format);
  out["extra_title"] = d.extra_title;
  out["tensors"] = std::move(tensors);
  out["metadata"] = std::move(metadata);
  out["notes"] = std::move(notes);
  out["refusal"] = refusal_dict(d.refusal);
  return out;
}

}  // namespace

void bind_pipelines(py::module_& m) {
  m.def("pickle_verdict", &pickle_verdict, py::arg("path"));
  m.def("describe", &describe, py::arg("path"));
  m.def("quantize_checkpoint", &quantize_checkpoint, py::arg("input"), py::arg("output"), py::arg("mode"),
        py::arg("bits"), py::arg("group_size"), py::arg("only"), py::arg("exclude"), py::arg("config_out"),
        py::arg("max_shard_size"), py::arg("max_output_size"), py::arg("progress"));
  m.def("dequantize_checkpoint", &dequantize_checkpoint, py::arg("input"), py::arg("output"), py::arg("dtype"),
        py::arg("max_shard_size"), py::arg("max_output_size"), py::arg("progress"));
  m.def("convert", &convert, py::arg("inputs"), py::arg("output"), py::arg("options"), py::arg("progress"));
  m.def("diff", &diff, py::arg("a"), py::arg("b"), py::arg("rtol"), py::arg("atol"), py::arg("ignore_dtype"),
        py::arg("progress"));
  m.def("checksum", &checksum, py::arg("path"), py::arg("per_tensor"), py::arg("progress"));
}

}  // namespace st_python
