// SPDX-License-Identifier: Apache-2.0
// json_text.h's header printers and json_quote, over the writer's compact header JSON.
#include "header/header_json.h"
#include "safetensors/json_text.h"

namespace safetensors {

std::string json_quote(std::string_view text) {
  std::string out;
  out.reserve(text.size() + 2);
  detail::append_json_display_string(out, text);
  return out;
}

std::string header_to_json(const header& h) { return detail::header_json(h.tensors(), h.metadata()); }

std::string header_to_display_json(const header& h) {
  return detail::header_json(h.tensors(), h.metadata(), detail::append_json_display_string);
}

}  // namespace safetensors
