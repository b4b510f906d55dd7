// SPDX-License-Identifier: Apache-2.0
#include "errors.h"

#include <cerrno>

namespace py = pybind11;

namespace st_python {
namespace {

PyObject* safetensor_error_type = nullptr;

/// `path` as the reference prints it (Rust's `{:?}` of a path): in double quotes, with
/// quotes, backslashes and control characters escaped.
std::string quoted_path(const std::string& path) {
  std::string out = "\"";
  for (const char c : path) {
    const auto u = static_cast<unsigned char>(c);
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      case '\0': out += "\\0"; break;
      default:
        if (u < 0x20 || u == 0x7f) {
          static constexpr char hex[] = "0123456789abcdef";
          out += "\\u{";
          if (u >= 0x10) out += hex[u >> 4];
          out += hex[u & 0xf];
          out += '}';
        } else {
          out += c;
        }
    }
  }
  out += '"';
  return out;
}

void raise(const safetensors::error& e) {
  if (e.code == safetensors::error_code::io && e.os_errno == ENOENT) {
    // The reference's FileNotFoundError and its message, word for word (the path quoted). Only
    // errno is set: OSError prints "[Errno 2] ...: 'path'" instead once strerror or filename is.
    py::object exc = py::reinterpret_borrow<py::object>(PyExc_FileNotFoundError)(
        py::str("No such file or directory: " + quoted_path(e.path)));
    exc.attr("errno") = ENOENT;
    PyErr_SetObject(PyExc_FileNotFoundError, exc.ptr());
    return;
  }
  py::object type = py::reinterpret_borrow<py::object>(safetensor_error_type);
  py::object exc = type(e.to_string());
  exc.attr("code") = py::str(std::string(safetensors::error_code_name(e.code)));
  exc.attr("offset") = e.offset ? py::cast(*e.offset) : py::none();
  exc.attr("tensor") = e.tensor ? py::cast(*e.tensor) : py::none();
  exc.attr("path") = e.path.empty() ? py::none() : py::cast(e.path);
  PyErr_SetObject(safetensor_error_type, exc.ptr());
}

}  // namespace

void fail_argument(std::string message) {
  throw python_error(safetensors::make_error(safetensors::error_code::invalid_argument, std::move(message)));
}

void bind_errors(py::module_& m) {
  safetensor_error_type = PyErr_NewExceptionWithDoc(
      "safetensors._safetensors_cxx.SafetensorError",
      "A SafeTensors error: `code` (e.g. 'InvalidOffset'), `offset`, `tensor` and `path` say what and where.",
      PyExc_Exception, nullptr);
  m.add_object("SafetensorError", py::handle(safetensor_error_type));
  py::register_exception_translator([](std::exception_ptr p) {
    try {
      if (p) std::rethrow_exception(p);
    } catch (const python_error& e) {
      raise(e.error());
    }
  });
}

}  // namespace st_python
