// SPDX-License-Identifier: Apache-2.0
// Turning the core's `error` into Python exceptions: SafetensorError (with code, offset,
// tensor and path attributes), or FileNotFoundError for a missing file as the reference does;
// the message leads with the reference's sentence for the operation that failed.
#pragma once

#include <cstdint>
#include <exception>
#include <utility>

#include <pybind11/pybind11.h>

#include "safetensors/error.h"

namespace st_python {

/// What the reference (upstream main, bindings/python/src/lib.rs) was doing when an error arose:
/// its sentence leads the message, our detail (path, message, offset, tensor) follows.
enum class operation : std::uint8_t {
  other,        ///< our message alone
  open,         ///< opening a file: FileNotFoundError when missing, else "Error while deserializing header: "
  deserialize,  ///< bytes in memory: "Error while deserializing: "
  serialize,    ///< writing: "Error while serializing: " (a missing folder too: no FileNotFoundError)
  lookup,       ///< a tensor name: the message is the reference's sentence, the path follows in parentheses
};

/// Carries a core error through C++ until pybind11 translates it.
class python_error : public std::exception {
 public:
  explicit python_error(safetensors::error e, operation op = operation::other) : error_(std::move(e)), op_(op) {}
  [[nodiscard]] const safetensors::error& error() const noexcept { return error_; }
  [[nodiscard]] operation during() const noexcept { return op_; }
  [[nodiscard]] const char* what() const noexcept override { return error_.message.c_str(); }

 private:
  safetensors::error error_;
  operation op_;
};

/// The value of `r`, or throws its error (raised as the reference does during `op`).
template <class T>
T unwrap(safetensors::result<T> r, operation op = operation::other) {
  if (!r) throw python_error(std::move(r).err(), op);
  return std::move(r).value();
}
inline void check(safetensors::status s, operation op = operation::other) {
  if (!s) throw python_error(std::move(s).err(), op);
}

/// Throws an InvalidArgument error with `message`.
[[noreturn]] void fail_argument(std::string message);

/// Creates SafetensorError in `m` and registers the translator.
void bind_errors(pybind11::module_& m);

}  // namespace st_python
