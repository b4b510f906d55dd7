// SPDX-License-Identifier: Apache-2.0
// One registration function per binding file; module.cpp calls them all.
#pragma once

#include <pybind11/pybind11.h>

namespace st_python {

void bind_reader(pybind11::module_& m);
void bind_writer(pybind11::module_& m);
void bind_validate(pybind11::module_& m);
void bind_mlx(pybind11::module_& m);
void bind_tp_load(pybind11::module_& m);
void bind_header_reader(pybind11::module_& m);
void bind_pipelines(pybind11::module_& m);
void bind_batch(pybind11::module_& m);

}  // namespace st_python
