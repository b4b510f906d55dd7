// SPDX-License-Identifier: Apache-2.0
// The extension module behind the `safetensors` Python package.
#include <pybind11/pybind11.h>

#include "bindings.h"
#include "errors.h"
#include "mapping.h"
#include "safetensors/location.h"
#if SAFETENSORS_HAVE_REMOTE
#include "safetensors/remote/remote.h"
#endif

PYBIND11_MODULE(_safetensors_cxx, m) {
  m.doc() = "safetensors-cxx: SafeTensors reading, writing and validation in C++";
#if SAFETENSORS_HAVE_REMOTE
  // http(s) URLs for the location door (location.h); the module links the remote library itself.
  (void)safetensors::remote::register_url_schemes();
#endif
  st_python::bind_errors(m);
  st_python::bind_mapping(m);
  st_python::bind_reader(m);
  st_python::bind_writer(m);
  st_python::bind_validate(m);
  st_python::bind_mlx(m);
  st_python::bind_tp_load(m);
  st_python::bind_header_reader(m);
  m.def(
      "is_url", [](std::string_view text) { return safetensors::is_url(text); }, pybind11::arg("text"),
      "True for `scheme://...`: what the library's location door (location.h) reads as a URL.");
#if defined(SAFETENSORS_PYTHON_PIPELINES)
  st_python::bind_pipelines(m);
  st_python::bind_batch(m);
#endif
}
