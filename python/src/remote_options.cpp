// SPDX-License-Identifier: Apache-2.0
#include "remote_options.h"

#include <string>

#include "errors.h"

namespace py = pybind11;

namespace st_python {
namespace {

std::string text_option(const char* key, const py::handle& value) {
  if (!py::isinstance<py::str>(value)) {
    throw py::type_error(std::string(key) + " must be a str, not " +
                         py::str(py::type::handle_of(value).attr("__name__")).cast<std::string>());
  }
  return value.cast<std::string>();
}

/// A number that is not a bool (True is not a timeout).
bool is_number(const py::handle& value) {
  return !py::isinstance<py::bool_>(value) && (py::isinstance<py::int_>(value) || py::isinstance<py::float_>(value));
}

}  // namespace

safetensors::url_options remote_options(const py::dict& given) {
  safetensors::url_options o;
  for (auto item : given) {
    const auto key = py::str(item.first).cast<std::string>();
    const py::handle value = item.second;
    if (key != "token" && key != "ca_file" && key != "insecure" && key != "timeout" && key != "connections") {
      fail_argument("unknown remote option '" + key + "' (valid: token, ca_file, insecure, timeout, connections)");
    }
    if (value.is_none()) continue;
    if (key == "token") {
      o.bearer_token = text_option("token", value);
    } else if (key == "ca_file") {
      o.ca_file = text_option("ca_file", value);
    } else if (key == "insecure") {
      o.insecure = py::bool_(py::reinterpret_borrow<py::object>(value));
    } else if (key == "timeout") {
      const double s = is_number(value) ? value.cast<double>() : 0;
      if (!(s > 0)) {
        fail_argument("timeout must be a positive number of seconds, not " + py::repr(value).cast<std::string>());
      }
      o.timeout_s = s;
    } else {
      const bool ok = is_number(value) && py::isinstance<py::int_>(value) && value.cast<long long>() >= 1 &&
                      value.cast<long long>() <= 64;
      if (!ok) fail_argument("connections must be an int from 1 to 64, not " + py::repr(value).cast<std::string>());
      o.connections = value.cast<int>();
    }
  }
  return o;
}

}  // namespace st_python
