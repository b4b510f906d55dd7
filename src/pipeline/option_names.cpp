// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/option_names.h"

#include <algorithm>

namespace safetensors::pipeline {

option_names option_names::keys() {
  option_names names;
  names.prefix_ = "option '";
  names.suffix_ = "'";
  return names;
}

option_names option_names::keywords() {
  option_names names;
  names.suffix_ = "=";
  return names;
}

option_names option_names::flags() {
  option_names names;
  names.prefix_ = "--";
  names.separator_ = '-';
  return names;
}

void option_names::rename(std::string option, std::string spelling) {
  renamed_.insert_or_assign(std::move(option), std::move(spelling));
}

std::string option_names::operator()(std::string_view option) const {
  if (const auto it = renamed_.find(option); it != renamed_.end()) return it->second;
  std::string name(option);
  std::ranges::replace(name, '_', separator_);
  return prefix_ + name + suffix_;
}

}  // namespace safetensors::pipeline
