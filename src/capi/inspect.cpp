// SPDX-License-Identifier: Apache-2.0
// What an inspector needs beyond reading: a slice's byte ranges (so a caller holding only the
// header can fetch them itself), value statistics, and the name of a file's format.
#include <algorithm>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "capi/boundary.h"
#include "capi/handles.h"
#include "safetensors/sniff.h"
#include "safetensors/stats.h"

namespace st = safetensors;
using namespace safetensors::capi;

extern "C" {

int safetensors_slice_range_count(const safetensors_slice* slice, size_t* count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    SAFETENSORS_C_REQUIRE(count);
    *count = slice->plan.ranges.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_slice_range_at(const safetensors_slice* slice, size_t index, uint64_t* offset, uint64_t* length) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    if (index >= slice->plan.ranges.size()) {
      return fail_argument(fn, fmt::format("range index {} is past the last range", index));
    }
    const st::byte_range& r = slice->plan.ranges[index];
    if (offset != nullptr) *offset = r.offset;
    if (length != nullptr) *length = r.length;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_stats_f32(const float* values, size_t count, safetensors_stats* out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    if (values == nullptr && count != 0) return fail_argument(fn, "values is NULL");
    st::stats_accumulator acc;
    acc.add(std::span(values, count));
    const st::tensor_stats s = acc.result();
    *out = safetensors_stats{s.count, s.nan, s.pos_inf, s.neg_inf, s.zeros, s.min, s.max, s.mean, s.std};
    return static_cast<int>(SAFETENSORS_OK);
  });
}

const char* safetensors_sniff_format(const void* data, size_t size) {
  if (data == nullptr) size = 0;
  const auto prefix = std::span(static_cast<const std::byte*>(data), std::min(size, st::sniff_prefix_bytes));
  return st::file_format_name(st::sniff_format(prefix)).data();  // names are string literals
}

}  // extern "C"
