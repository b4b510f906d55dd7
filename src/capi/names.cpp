// SPDX-License-Identifier: Apache-2.0
// Version, status and dtype names: the C API's static strings.
#include <cstring>

#include "capi/boundary.h"
#include "safetensors/dtype.h"

namespace {

namespace st = safetensors;

// The C enums are the C++ ones plus one (statuses) or equal (dtypes): checked here, so a new
// library error code or dtype cannot silently shift the C numbering.
static_assert(SAFETENSORS_ERR_HEADER_TOO_SMALL == static_cast<int>(st::error_code::header_too_small) + 1);
static_assert(SAFETENSORS_ERR_INVALID_OFFSET == static_cast<int>(st::error_code::invalid_offset) + 1);
static_assert(SAFETENSORS_ERR_METADATA_INCOMPLETE_BUFFER ==
              static_cast<int>(st::error_code::metadata_incomplete_buffer) + 1);
static_assert(SAFETENSORS_ERR_IO == static_cast<int>(st::error_code::io) + 1);
static_assert(SAFETENSORS_ERR_CANCELLED == static_cast<int>(st::error_code::cancelled) + 1);
static_assert(SAFETENSORS_ERR_CODE_EXECUTION == static_cast<int>(st::error_code::code_execution) + 1);
static_assert(SAFETENSORS_ERR_CODE_EXECUTION < SAFETENSORS_ERR_OUT_OF_MEMORY);
static_assert(SAFETENSORS_DTYPE_BOOL == static_cast<int>(st::dtype::BOOL));
static_assert(SAFETENSORS_DTYPE_F8_E5M2FNUZ == static_cast<int>(st::dtype::F8_E5M2FNUZ));
static_assert(SAFETENSORS_DTYPE_BF16 == static_cast<int>(st::dtype::BF16));
static_assert(SAFETENSORS_DTYPE_U64 == static_cast<int>(st::dtype::U64));
static_assert(SAFETENSORS_DTYPE_U64 + 1 == st::dtype_count);

constexpr int last_library_status = SAFETENSORS_ERR_CODE_EXECUTION;

#define SAFETENSORS_C_STRINGIFY2(x) #x
#define SAFETENSORS_C_STRINGIFY(x) SAFETENSORS_C_STRINGIFY2(x)

}  // namespace

extern "C" {

const char* safetensors_version(void) {
  return SAFETENSORS_C_STRINGIFY(SAFETENSORS_C_VERSION_MAJOR) "." SAFETENSORS_C_STRINGIFY(
      SAFETENSORS_C_VERSION_MINOR) "." SAFETENSORS_C_STRINGIFY(SAFETENSORS_C_VERSION_PATCH);
}

// The header's version is the project's (CMake passes it in).
static_assert(SAFETENSORS_C_VERSION_MAJOR == SAFETENSORS_PROJECT_VERSION_MAJOR &&
                  SAFETENSORS_C_VERSION_MINOR == SAFETENSORS_PROJECT_VERSION_MINOR &&
                  SAFETENSORS_C_VERSION_PATCH == SAFETENSORS_PROJECT_VERSION_PATCH,
              "safetensors_c.h's SAFETENSORS_C_VERSION_* differ from the project's version");

uint32_t safetensors_version_number(void) {
  return SAFETENSORS_C_VERSION_MAJOR * 10000U + SAFETENSORS_C_VERSION_MINOR * 100U + SAFETENSORS_C_VERSION_PATCH;
}

const char* safetensors_status_name(int status) {
  if (status == SAFETENSORS_OK) return "ok";
  if (status == SAFETENSORS_ERR_OUT_OF_MEMORY) return "OutOfMemory";
  if (status == SAFETENSORS_ERR_INTERNAL) return "InternalError";
  if (status < 1 || status > last_library_status) return "Unknown";
  // error_code_name returns string literals: NUL-terminated, static.
  return st::error_code_name(static_cast<st::error_code>(status - 1)).data();
}

const char* safetensors_dtype_name(int dtype) {
  if (dtype < 0 || dtype >= st::dtype_count) return nullptr;
  return st::dtype_name(static_cast<st::dtype>(dtype)).data();  // a string literal
}

int safetensors_dtype_from_name(const char* name, int* dtype) {
  using namespace safetensors::capi;
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(name);
    SAFETENSORS_C_REQUIRE(dtype);
    auto parsed = st::parse_dtype(std::string_view(name, std::strlen(name)));
    if (!parsed) return fail_argument(fn, std::string("unknown dtype '") + name + "'");
    *dtype = static_cast<int>(*parsed);
    return static_cast<int>(SAFETENSORS_OK);
  });
}

unsigned safetensors_dtype_bits(int dtype) {
  if (dtype < 0 || dtype >= st::dtype_count) return 0;
  return st::dtype_bits(static_cast<st::dtype>(dtype));
}

}  // extern "C"
