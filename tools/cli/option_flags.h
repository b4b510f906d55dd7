// SPDX-License-Identifier: Apache-2.0
// A subcommand's flags that are the pipeline's options (set_option, safetensors/pipeline/
// convert.h), as Python's keywords and the C API's keys are: each flag is bound to the
// library's name and, after parsing, every flag given is set by that name, its values as
// typed. A flag not given is not set, so the library tells a choice from a default (`--shared
// keep` for a SafeTensors input is refused). The library checks every option, once, and its
// messages name the flag as typed.
#pragma once

#include <CLI/CLI.hpp>

#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "safetensors/pipeline/convert.h"

namespace st_cli {

class option_flags {
 public:
  /// What a typed value sets: the option's text, or nullopt for nothing (--dtype keep).
  using value_map = std::function<std::optional<std::string>(const std::string& typed)>;

  /// `flag` is the library's option `option`; `value` maps what was typed (default: as typed).
  /// Returns `flag`.
  CLI::Option* bind(CLI::Option* flag, std::string option, value_map value = {});

  /// Names every option as a flag (the bound ones as bound), then sets each flag given.
  [[nodiscard]] safetensors::status apply(safetensors::pipeline::convert_options& options) const;

 private:
  struct binding {
    CLI::Option* flag;
    std::string option;
    value_map value;
  };
  std::vector<binding> bindings_;
};

}  // namespace st_cli
