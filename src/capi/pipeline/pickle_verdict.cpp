// SPDX-License-Identifier: Apache-2.0
// A PyTorch checkpoint's pickle verdict through the C API (safetensors/formats/pickle_verdict.h):
// what its pickles name outside the allowlist, also for a file safetensors_convert refuses.
// Without the converters the functions fail with SAFETENSORS_ERR_UNSUPPORTED (same ABI).
#include <string>

#include "capi/boundary.h"
#include "safetensors/safetensors_c.h"

using namespace safetensors::capi;

#if SAFETENSORS_C_HAVE_PIPELINES
#include "safetensors/formats/pytorch.h"

namespace torch = safetensors::torch;

struct safetensors_pickle_verdict {
  torch::checkpoint_audit audit;
  std::string refusal_text;
};

// The C enum follows the C++ one.
static_assert(SAFETENSORS_PICKLE_RUNS_CODE == static_cast<int>(torch::pickle_verdict_kind::runs_code));
static_assert(SAFETENSORS_PICKLE_INERT_OBJECTS == static_cast<int>(torch::pickle_verdict_kind::inert_objects));

extern "C" {

int safetensors_pickle_verdict_open(const char* path, safetensors_pickle_verdict** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    SAFETENSORS_C_REQUIRE(path);
    auto* verdict = new safetensors_pickle_verdict{torch::audit_checkpoint(path), {}};
    if (verdict->audit.refusal) verdict->refusal_text = verdict->audit.refusal->to_string();
    *out = verdict;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

void safetensors_pickle_verdict_free(safetensors_pickle_verdict* verdict) { delete verdict; }

int safetensors_pickle_verdict_kind(const safetensors_pickle_verdict* verdict) {
  return verdict == nullptr ? -1 : static_cast<int>(verdict->audit.verdict.kind());
}

int safetensors_pickle_verdict_refusal(const safetensors_pickle_verdict* verdict, const char** text) {
  if (verdict == nullptr) return SAFETENSORS_ERR_INVALID_ARGUMENT;
  if (text != nullptr) *text = verdict->refusal_text.c_str();
  if (!verdict->audit.refusal) return SAFETENSORS_OK;
  return static_cast<int>(verdict->audit.refusal->code) + 1;  // the C status (names.cpp checks the numbering)
}

size_t safetensors_pickle_verdict_global_count(const safetensors_pickle_verdict* verdict) {
  return verdict == nullptr ? 0 : verdict->audit.verdict.globals.size();
}

int safetensors_pickle_verdict_global(const safetensors_pickle_verdict* verdict, size_t index, const char** name,
                                      int* runs_code, uint64_t* offset) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(verdict);
    const auto& globals = verdict->audit.verdict.globals;
    if (index >= globals.size()) return fail_argument(fn, "index is past the last global");
    const auto& g = globals[index];
    if (name != nullptr) *name = g.name.c_str();
    if (runs_code != nullptr) *runs_code = g.runs_code ? 1 : 0;
    if (offset != nullptr) *offset = g.offset;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

}  // extern "C"

#else  // built without the converters

struct safetensors_pickle_verdict {};

extern "C" {
int safetensors_pickle_verdict_open(const char* /*path*/, safetensors_pickle_verdict** out) {
  if (out != nullptr) *out = nullptr;
  return fail_plain(SAFETENSORS_ERR_UNSUPPORTED,
                    "safetensors_pickle_verdict_open: this build has no converters (SAFETENSORS_BUILD_FORMATS=OFF)");
}
void safetensors_pickle_verdict_free(safetensors_pickle_verdict* verdict) { delete verdict; }
int safetensors_pickle_verdict_kind(const safetensors_pickle_verdict*) { return -1; }
int safetensors_pickle_verdict_refusal(const safetensors_pickle_verdict*, const char** text) {
  if (text != nullptr) *text = "";
  return SAFETENSORS_ERR_INVALID_ARGUMENT;
}
size_t safetensors_pickle_verdict_global_count(const safetensors_pickle_verdict*) { return 0; }
int safetensors_pickle_verdict_global(const safetensors_pickle_verdict*, size_t, const char**, int*, uint64_t*) {
  return fail_plain(SAFETENSORS_ERR_UNSUPPORTED, "safetensors_pickle_verdict_global: this build has no converters");
}
}  // extern "C"

#endif
