// SPDX-License-Identifier: Apache-2.0
// Policy names.
#include "safetensors/policy.h"

namespace safetensors {

std::string_view policy_name(validation_policy p) noexcept {
  switch (p) {
    case validation_policy::reference: return "reference";
    case validation_policy::strict: return "strict";
    case validation_policy::lenient: return "lenient";
  }
  return "reference";
}

std::optional<validation_policy> parse_policy(std::string_view name) noexcept {
  for (auto p : {validation_policy::reference, validation_policy::strict, validation_policy::lenient}) {
    if (policy_name(p) == name) return p;
  }
  return std::nullopt;
}

}  // namespace safetensors
