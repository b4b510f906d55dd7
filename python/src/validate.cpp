// SPDX-License-Identifier: Apache-2.0
// `validate(path, policy)`: the verdict as a dict instead of an exception.
#include <string>

#include <pybind11/stl.h>

#include "bindings.h"
#include "buffers.h"
#include "safetensors/file.h"

namespace py = pybind11;
namespace st = safetensors;

namespace st_python {
namespace {

py::dict validate(const std::string& path, const std::string& policy) {
  const auto options = parse_options_for(policy);
  std::optional<st::result<st::header>> header;
  {
    py::gil_scoped_release release;
    header.emplace(st::read_header(path, options));
  }
  py::dict out;
  out["ok"] = header->ok();
  py::list warnings;
  if (header->ok()) {
    for (const auto& w : (*header)->warnings()) warnings.append(w.message);
    out["code"] = py::none();
    out["message"] = py::none();
    out["offset"] = py::none();
    out["tensor"] = py::none();
  } else {
    const auto& e = header->err();
    out["code"] = std::string(st::error_code_name(e.code));
    out["message"] = e.to_string();
    out["offset"] = e.offset ? py::cast(*e.offset) : py::none();
    out["tensor"] = e.tensor ? py::cast(*e.tensor) : py::none();
  }
  out["warnings"] = warnings;
  return out;
}

}  // namespace

void bind_validate(py::module_& m) {
  m.def("validate", &validate, py::arg("path"), py::arg("policy") = "reference",
        "Validates a file's header against its size: {'ok', 'code', 'message', 'offset', 'tensor', 'warnings'}.");
}

}  // namespace st_python
