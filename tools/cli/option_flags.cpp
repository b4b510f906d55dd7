// SPDX-License-Identifier: Apache-2.0
#include "option_flags.h"

#include <utility>

namespace st_cli {

namespace sp = safetensors::pipeline;

CLI::Option* option_flags::bind(CLI::Option* flag, std::string option, value_map value) {
  bindings_.push_back({flag, std::move(option), std::move(value)});
  return flag;
}

safetensors::status option_flags::apply(sp::convert_options& options) const {
  options.names = sp::option_names::flags();
  for (const auto& b : bindings_) options.names.rename(b.option, b.flag->get_name());
  for (const auto& b : bindings_) {
    for (const auto& typed : b.flag->results()) {
      const std::optional<std::string> text = b.value ? b.value(typed) : typed;
      if (!text) continue;
      if (auto s = sp::set_option(options, b.option, *text); !s) return s;
    }
  }
  return {};
}

}  // namespace st_cli
