// SPDX-License-Identifier: Apache-2.0
// Turning the core's `error` into Python exceptions: SafetensorError (with code, offset,
// tensor and path attributes), or FileNotFoundError for a missing file as the reference does.
#pragma once

#include <exception>
#include <utility>

#include <pybind11/pybind11.h>

#include "safetensors/error.h"

namespace st_python {

/// Carries a core error through C++ until pybind11 translates it.
class python_error : public std::exception {
 public:
  explicit python_error(safetensors::error e) : error_(std::move(e)) {}
  [[nodiscard]] const safetensors::error& error() const noexcept { return error_; }
  [[nodiscard]] const char* what() const noexcept override { return error_.message.c_str(); }

 private:
  safetensors::error error_;
};

/// The value of `r`, or throws its error.
template <class T>
T unwrap(safetensors::result<T> r) {
  if (!r) throw python_error(std::move(r).err());
  return std::move(r).value();
}
inline void check(safetensors::status s) {
  if (!s) throw python_error(std::move(s).err());
}

/// Throws an InvalidArgument error with `message`.
[[noreturn]] void fail_argument(std::string message);

/// Creates SafetensorError in `m` and registers the translator.
void bind_errors(pybind11::module_& m);

}  // namespace st_python
