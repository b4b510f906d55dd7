// SPDX-License-Identifier: Apache-2.0
#include "header/parser_pool.h"

#include <cstring>
#include <new>

namespace safetensors::detail {

const char* json_parsers::padded_copy(std::string_view json) {
  const std::size_t need = json.size() + simdjson::SIMDJSON_PADDING;
  if (need > copy_capacity) {
    copy.reset();
    copy_capacity = 0;
    try {  // huge pages for large headers (allocate_array)
      copy = std::unique_ptr<char[], array_deleter>(static_cast<char*>(allocate_array(need)), array_deleter{need});
    } catch (const std::bad_alloc&) {
      return nullptr;
    }
    copy_capacity = need;
  }
  std::memcpy(copy.get(), json.data(), json.size());
  std::memset(copy.get() + json.size(), ' ', simdjson::SIMDJSON_PADDING);
  return copy.get();
}

json_parsers& parser_lease::cached() {
  thread_local json_parsers p;
  return p;
}

}  // namespace safetensors::detail
