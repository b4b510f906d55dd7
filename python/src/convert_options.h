// SPDX-License-Identifier: Apache-2.0
// convert()'s keyword options, from the dict _pipelines.py gathers, for every binding that converts.
#pragma once

#include <pybind11/pybind11.h>

#include "safetensors/pipeline/convert.h"

namespace st_python {

/// Sets each option by name as the C API does (None: the default; a list repeats the option).
[[nodiscard]] safetensors::pipeline::convert_options convert_options_from(const pybind11::dict& given);

}  // namespace st_python
