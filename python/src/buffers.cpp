// SPDX-License-Identifier: Apache-2.0
#include "buffers.h"

#include <fmt/format.h>

#include <utility>

#include "errors.h"
#include "safetensors/policy.h"

namespace py = pybind11;

namespace st_python {

contiguous_buffer::contiguous_buffer(const py::handle& object, bool writable) {
  const int flags = PyBUF_C_CONTIGUOUS | (writable ? PyBUF_WRITABLE : 0);
  if (PyObject_GetBuffer(object.ptr(), &view_, flags) != 0) throw py::error_already_set();
  held_ = true;
}

contiguous_buffer::contiguous_buffer(contiguous_buffer&& other) noexcept
    : view_(other.view_), held_(std::exchange(other.held_, false)) {}

contiguous_buffer::~contiguous_buffer() {
  if (held_) PyBuffer_Release(&view_);
}

safetensors::dtype dtype_from_code(const std::string& code) {
  auto t = safetensors::parse_dtype(code);
  if (!t) fail_argument("dtype " + code + " is not covered");
  return *t;
}

std::vector<std::uint64_t> shape_from(const py::handle& sequence) {
  std::vector<std::uint64_t> shape;
  for (const py::handle item : sequence) {
    const auto d = py::cast<long long>(item);
    if (d < 0) fail_argument(fmt::format("negative dimension {} in a shape", d));
    shape.push_back(static_cast<std::uint64_t>(d));
  }
  return shape;
}

std::optional<safetensors::metadata_map> metadata_from(const py::handle& dict_or_none) {
  if (dict_or_none.is_none()) return std::nullopt;
  if (!py::isinstance<py::dict>(dict_or_none)) {
    fail_argument("metadata must be a dict of str to str, got " + py::repr(dict_or_none).cast<std::string>());
  }
  safetensors::metadata_map out;
  for (const auto& [key, value] : py::cast<py::dict>(dict_or_none)) {
    if (!py::isinstance<py::str>(key) || !py::isinstance<py::str>(value)) {
      fail_argument("metadata keys and values must be str, got " + py::repr(key).cast<std::string>() + ": " +
                    py::repr(value).cast<std::string>());
    }
    out.emplace(key.cast<std::string>(), value.cast<std::string>());
  }
  return out;
}

py::object metadata_to_python(const std::optional<safetensors::metadata_map>& metadata) {
  if (!metadata) return py::none();
  py::dict out;
  for (const auto& [k, v] : *metadata) out[py::str(k)] = py::str(v);
  return out;
}

std::vector<safetensors::slice_index> indexers_from(const py::list& items) {
  std::vector<safetensors::slice_index> out;
  for (const py::handle item : items) {
    const auto t = py::cast<py::tuple>(item);
    const auto kind = t[0].cast<std::string>();
    if (kind == "index") {
      out.push_back(safetensors::slice_index::at(t[1].cast<std::int64_t>()));
    } else if (kind == "range") {
      auto opt = [](const py::handle& h) {
        return h.is_none() ? std::nullopt : std::optional<std::int64_t>(h.cast<std::int64_t>());
      };
      const std::int64_t step = t[3].is_none() ? 1 : t[3].cast<std::int64_t>();
      out.push_back(safetensors::slice_index::range(opt(t[1]), opt(t[2]), step));
    } else {
      out.push_back(safetensors::slice_index::ellipsis());
    }
  }
  return out;
}

safetensors::parse_options parse_options_for(const std::string& policy) {
  auto p = safetensors::parse_policy(policy);
  if (!p) fail_argument("policy " + policy + " is invalid (valid: reference, strict, lenient)");
  safetensors::parse_options options;
  options.policy = *p;
  return options;
}

}  // namespace st_python
