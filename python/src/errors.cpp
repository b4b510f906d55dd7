// SPDX-License-Identifier: Apache-2.0
#include "errors.h"

#include <cerrno>
#include <string>
#include <string_view>

namespace py = pybind11;

namespace st_python {
namespace {

PyObject* safetensor_error_type = nullptr;

/// `path` as the reference's upstream main prints it (Rust's `Path::display()`): as is, bytes
/// that are not UTF-8 replaced by U+FFFD.
py::str displayed_path(const std::string& path) {
  PyObject* text = PyUnicode_DecodeUTF8(path.data(), static_cast<Py_ssize_t>(path.size()), "replace");
  if (text == nullptr) throw py::error_already_set();
  return py::reinterpret_steal<py::str>(text);
}

/// The reference's sentence for errors of `op` (none for `other`).
std::string_view lead_for(operation op, const safetensors::error& e) {
  switch (op) {
    case operation::open:
      // The file was opened and its header is wrong; other I/O failures keep our words.
      return e.code == safetensors::error_code::io ? "" : "Error while deserializing header: ";
    case operation::deserialize: return "Error while deserializing: ";
    case operation::serialize: return "Error while serializing: ";
    case operation::lookup:
    case operation::other: break;
  }
  return "";
}

void raise(const safetensors::error& e, operation op) {
  if (e.code == safetensors::error_code::io && e.os_errno == ENOENT && op != operation::serialize) {
    // The reference's FileNotFoundError and its message, word for word (the path unquoted). Only
    // errno is set: OSError prints "[Errno 2] ...: 'path'" instead once strerror or filename is.
    py::object exc = py::reinterpret_borrow<py::object>(PyExc_FileNotFoundError)(
        py::str("No such file or directory: ") + displayed_path(e.path));
    exc.attr("errno") = ENOENT;
    PyErr_SetObject(PyExc_FileNotFoundError, exc.ptr());
    return;
  }
  py::object type = py::reinterpret_borrow<py::object>(safetensor_error_type);
  std::string message(lead_for(op, e));
  if (op == operation::lookup) {
    message += e.message;  // the reference's sentence names the tensor
    if (!e.path.empty()) message += " (" + e.path + ")";
  } else {
    message += e.to_string();
  }
  py::object exc = type(message);
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
      raise(e.error(), e.during());
    }
  });
}

}  // namespace st_python
