// SPDX-License-Identifier: Apache-2.0
// The library's pipelines for Python: `convert` (any format the library reads to any it
// writes). The work runs without the GIL; the progress callback and Ctrl-C checks take it
// back between chunks, and either can stop the run (nothing is left at the output).
#include <optional>
#include <string>

#include <pybind11/functional.h>
#include <pybind11/stl.h>

#include "bindings.h"
#include "errors.h"
#include "safetensors/pipeline/convert.h"

namespace py = pybind11;
namespace sp = safetensors::pipeline;

namespace st_python {
namespace {

sp::shared_tensors shared_policy(const std::string& shared) {
  if (shared == "keep") return sp::shared_tensors::keep;
  if (shared == "dedup") return sp::shared_tensors::dedup;
  fail_argument("shared must be 'keep' or 'dedup', not '" + shared + "'");
}

std::optional<safetensors::dtype> cast_type(const std::optional<std::string>& dtype) {
  if (!dtype) return std::nullopt;
  auto parsed = safetensors::parse_dtype(*dtype);
  if (!parsed) fail_argument("unknown dtype '" + *dtype + "'");
  return *parsed;
}

py::dict summary_dict(const sp::convert_summary& s) {
  py::dict d;
  d["input_format"] = s.input_format;
  d["output_format"] = std::string(sp::output_format_name(s.output));
  d["tensors"] = s.tensors;
  d["parameters"] = s.parameters;
  d["bytes"] = s.bytes;
  d["notes"] = s.notes;
  d["warnings"] = s.warnings;
  return d;
}

py::dict convert(const std::string& in, const std::string& out, const std::string& to,
                 const std::optional<std::string>& dtype, const std::string& key, const std::string& shared,
                 bool strict, bool compress, bool hash_long_names, const py::object& progress) {
  sp::convert_options options;
  options.to = to;
  options.cast = cast_type(dtype);
  options.read.key = key;
  options.read.shared = shared_policy(shared);
  options.read.strict = strict;
  options.compress = compress;
  options.hash_long_names = hash_long_names;
  // Raised inside a callback: kept, and raised again once the pipeline has cleaned up.
  std::optional<py::error_already_set> raised;
  options.progress = [&](std::uint64_t done, std::uint64_t total) {
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
  safetensors::result<sp::convert_summary> summary = [&] {
    py::gil_scoped_release release;
    return sp::convert(in, out, options);
  }();
  if (raised) throw std::move(*raised);
  return summary_dict(unwrap(std::move(summary)));
}

}  // namespace

void bind_pipelines(py::module_& m) {
  m.def("convert", &convert, py::arg("input"), py::arg("output"), py::arg("to") = "", py::arg("dtype") = py::none(),
        py::arg("key") = "", py::arg("shared") = "keep", py::arg("strict") = false, py::arg("compress") = false,
        py::arg("hash_long_names") = false, py::arg("progress") = py::none());
}

}  // namespace st_python
