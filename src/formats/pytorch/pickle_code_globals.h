// SPDX-License-Identifier: Apache-2.0
// Internal: the code-execution list. A pickle that names one of these globals (GLOBAL,
// STACK_GLOBAL, INST) anywhere in its stream is an attack, whatever it does with it: the
// pickle machine refuses the whole file with error_code::code_execution. Nothing is ever
// imported either way; the list only tells an attack from an inert foreign object.
#pragma once

#include <span>
#include <string_view>

namespace safetensors::torch::detail {

struct code_global {
  std::string_view module;  ///< "os", "builtins", "torch.storage"
  std::string_view name;    ///< "" for the whole module and its submodules, else one name
  std::string_view why;     ///< what it does, for the documentation and the tests
};

/// The table (pickle_code_globals.cpp), for the tests and the documentation.
[[nodiscard]] std::span<const code_global> code_execution_globals() noexcept;

/// True when `module.name` reaches a listed global: the module itself or a parent module
/// listed whole, module and name listed together, or, when `name` is dotted (pickle
/// protocol 4 resolves "a.b.c" attribute by attribute), any listed path inside that walk
/// or a dunder attribute on the way (`__globals__`, `__builtins__`, ...).
/// `__builtins__` is read as `builtins`, and a Python 2 module name (`__builtin__`,
/// `commands`, `thread`, `urllib2`, ...) as the Python 3 module the unpickler imports for it.
[[nodiscard]] bool runs_code(std::string_view module, std::string_view name);

}  // namespace safetensors::torch::detail
