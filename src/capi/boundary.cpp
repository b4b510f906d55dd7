// SPDX-License-Identifier: Apache-2.0
// The per-thread last error and the functions that read it.
#include "capi/boundary.h"

#include <fmt/format.h>

#include <optional>

namespace safetensors::capi {
namespace {

struct last_error {
  int code = SAFETENSORS_OK;
  std::string message;
  std::optional<std::uint64_t> offset;
  std::optional<std::string> tensor;
  std::string path;
  int os_errno = 0;
  std::string text;  // the one-line report, built on request
};

thread_local last_error last;

}  // namespace

int fail(const error& e) noexcept {
  const int status = static_cast<int>(e.code) + 1;
  try {
    last.code = status;
    last.message = e.message;
    last.offset = e.offset;
    last.tensor = e.tensor;
    last.path = e.path;
    last.os_errno = e.os_errno;
    last.text = e.to_string();
  } catch (...) {
    // Copying the details ran out of memory: keep the code, drop the details.
    last = last_error{};
    last.code = status;
  }
  return status;
}

int fail_plain(int status, std::string_view message) noexcept {
  last = last_error{};
  last.code = status;
  try {
    last.message = message;
    last.text = message;
  } catch (...) {  // the code alone says enough
  }
  return status;
}

int fail_argument(const char* function, std::string_view message) noexcept {
  try {
    return fail(make_error(error_code::invalid_argument, fmt::format("{}: {}", function, message)));
  } catch (...) {
    return fail_plain(SAFETENSORS_ERR_INVALID_ARGUMENT, message);
  }
}

}  // namespace safetensors::capi

using safetensors::capi::last;

extern "C" {

int safetensors_last_error_code(void) { return last.code; }
const char* safetensors_last_error_message(void) { return last.message.c_str(); }
int safetensors_last_error_offset(uint64_t* offset) {
  if (!last.offset) return 0;
  if (offset != nullptr) *offset = *last.offset;
  return 1;
}
const char* safetensors_last_error_tensor(void) { return last.tensor ? last.tensor->c_str() : nullptr; }
const char* safetensors_last_error_path(void) { return last.path.c_str(); }
int safetensors_last_error_os_errno(void) { return last.os_errno; }
const char* safetensors_last_error_text(void) { return last.text.c_str(); }
size_t safetensors_last_error_message_length(void) { return last.message.size(); }
size_t safetensors_last_error_tensor_length(void) { return last.tensor ? last.tensor->size() : 0; }
size_t safetensors_last_error_text_length(void) { return last.text.size(); }
void safetensors_clear_error(void) { last = {}; }

}  // extern "C"
