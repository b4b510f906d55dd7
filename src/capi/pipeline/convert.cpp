// SPDX-License-Identifier: Apache-2.0
// The conversion pipeline through the C API (safetensors/pipeline/convert.h): convert, cast,
// extract, merge and shard are one call with options set by name. A build without the
// converters (SAFETENSORS_BUILD_FORMATS=OFF) keeps the same symbols, which then fail with
// SAFETENSORS_ERR_UNSUPPORTED, so the ABI does not depend on the configuration. Not part of
// the WebAssembly build, which has no file system to write to.
#include <string>
#include <vector>

#include "capi/boundary.h"
#include "safetensors/safetensors_c.h"

using namespace safetensors::capi;

#if SAFETENSORS_C_HAVE_PIPELINES
#include "safetensors/pipeline/convert.h"

namespace sp = safetensors::pipeline;

struct safetensors_convert_options {
  sp::convert_options options;
  safetensors_progress_fn progress = nullptr;
  void* user = nullptr;
};

extern "C" {

int safetensors_convert_options_new(safetensors_convert_options** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = new safetensors_convert_options();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

void safetensors_convert_options_free(safetensors_convert_options* options) { delete options; }

int safetensors_convert_options_set(safetensors_convert_options* options, const char* name, const char* value) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(options);
    SAFETENSORS_C_REQUIRE(name);
    SAFETENSORS_C_REQUIRE(value);
    return status_of(sp::set_option(options->options, name, value));
  });
}

int safetensors_convert_options_set_progress(safetensors_convert_options* options, safetensors_progress_fn progress,
                                             void* user) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(options);
    options->progress = progress;
    options->user = user;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_convert(const char* const* inputs, size_t input_count, const char* output,
                        const safetensors_convert_options* options) {
  return guarded(__func__, [&](const char* fn) {
    if (inputs == nullptr && input_count != 0) return fail_argument(fn, "inputs is NULL");
    SAFETENSORS_C_REQUIRE(output);
    std::vector<std::string> paths;
    for (size_t i = 0; i < input_count; ++i) {
      if (inputs[i] == nullptr) return fail_argument(fn, "an input is NULL");
      paths.emplace_back(inputs[i]);
    }
    sp::convert_options run = options != nullptr ? options->options : sp::convert_options{};
    if (options != nullptr && options->progress != nullptr) {
      run.progress = [options](std::uint64_t done, std::uint64_t total) {
        return options->progress(done, total, options->user) != 0;
      };
    }
    auto summary = sp::convert(paths, output, run);
    return summary ? static_cast<int>(SAFETENSORS_OK) : fail(summary.err());
  });
}

}  // extern "C"

#else  // built without the converters

struct safetensors_convert_options {};

namespace {
int unsupported(const char* fn) {
  return fail_plain(SAFETENSORS_ERR_UNSUPPORTED,
                    std::string(fn) + ": this build has no converters (SAFETENSORS_BUILD_FORMATS=OFF)");
}
}  // namespace

extern "C" {
int safetensors_convert_options_new(safetensors_convert_options** out) {
  if (out != nullptr) *out = nullptr;
  return unsupported(__func__);
}
void safetensors_convert_options_free(safetensors_convert_options* options) { delete options; }
int safetensors_convert_options_set(safetensors_convert_options*, const char*, const char*) {
  return unsupported(__func__);
}
int safetensors_convert_options_set_progress(safetensors_convert_options*, safetensors_progress_fn, void*) {
  return unsupported(__func__);
}
int safetensors_convert(const char* const*, size_t, const char*, const safetensors_convert_options*) {
  return unsupported(__func__);
}
}  // extern "C"

#endif
