// SPDX-License-Identifier: Apache-2.0
// Reading tensors and slices into caller buffers, and the element codecs.
#include <fmt/format.h>

#include <cstring>

#include "capi/boundary.h"
#include "capi/handles.h"
#include "safetensors/convert.h"

namespace st = safetensors;
using namespace safetensors::capi;

namespace {

std::span<std::byte> bytes_of(void* dst, std::size_t size) { return {static_cast<std::byte*>(dst), size}; }

bool valid_dtype(int dtype) { return dtype >= 0 && dtype < st::dtype_count; }

/// The file behind a handle, or an UNSUPPORTED error for a header-only handle.
const st::file* data_source(const char* fn, const safetensors_file* f, int& status) {
  if (f->file) return &*f->file;
  status = fail(st::make_error(st::error_code::unsupported,
                               fmt::format("{}: the handle holds a header only (safetensors_open_header)", fn)));
  return nullptr;
}

int size_mismatch(const char* fn, const char* what, std::uint64_t expected, std::uint64_t given) {
  return fail_argument(fn, fmt::format("the {} needs exactly {} but {} were given", what, expected, given));
}

/// Decodes `count` elements of `type` from `src` into `dst`.
int decode(const st::dtype type, std::span<const std::byte> src, float* dst, std::size_t count) {
  return status_of(st::decode_to_f32(type, src, std::span(dst, count)));
}

}  // namespace

extern "C" {

int safetensors_tensor_read(const safetensors_file* file, size_t index, void* dst, size_t size) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    if (dst == nullptr && size != 0) return fail_argument(fn, "dst is NULL");
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    const st::file* f = data_source(fn, file, status);
    if (f == nullptr) return status;
    if (size != t->byte_size()) return size_mismatch(fn, "tensor", t->byte_size(), size);
    return status_of(f->read_into(*t, bytes_of(dst, size)));
  });
}

int safetensors_tensor_read_f32(const safetensors_file* file, size_t index, float* dst, size_t count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    if (dst == nullptr && count != 0) return fail_argument(fn, "dst is NULL");
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    const st::file* f = data_source(fn, file, status);
    if (f == nullptr) return status;
    if (count != t->element_count()) return size_mismatch(fn, "tensor's float count", t->element_count(), count);
    if (f->resident()) return decode(t->type, f->view(*t).data, dst, count);
    std::vector<std::byte> bytes(static_cast<std::size_t>(t->byte_size()));
    if (auto r = f->read_into(*t, bytes); !r) return fail(r.err());
    return decode(t->type, bytes, dst, count);
  });
}

int safetensors_slice_new(const safetensors_file* file, size_t index, const char* spec, safetensors_slice** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(spec);
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    auto indexers = st::parse_slice_spec(spec);
    if (!indexers) return fail(indexers.err());
    auto plan = st::plan_slice(*t, file->header().data_start(), *indexers);
    if (!plan) return fail(plan.err());
    auto slice = std::make_unique<safetensors_slice>();
    slice->owner = file;
    slice->element_count = st::element_count(plan->shape).value_or(0);  // within the tensor's count
    slice->plan = std::move(*plan);
    *out = slice.release();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

void safetensors_slice_free(safetensors_slice* slice) { delete slice; }

int safetensors_slice_shape(const safetensors_slice* slice, const uint64_t** dims, size_t* rank) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    SAFETENSORS_C_REQUIRE(dims);
    SAFETENSORS_C_REQUIRE(rank);
    *dims = slice->plan.shape.data();
    *rank = slice->plan.shape.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_slice_dtype(const safetensors_slice* slice, int* dtype) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    SAFETENSORS_C_REQUIRE(dtype);
    *dtype = static_cast<int>(slice->plan.type);
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_slice_byte_size(const safetensors_slice* slice, uint64_t* bytes) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    SAFETENSORS_C_REQUIRE(bytes);
    *bytes = slice->plan.byte_size;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_slice_element_count(const safetensors_slice* slice, uint64_t* count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    SAFETENSORS_C_REQUIRE(count);
    *count = slice->element_count;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_slice_read(const safetensors_slice* slice, void* dst, size_t size) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    if (dst == nullptr && size != 0) return fail_argument(fn, "dst is NULL");
    int status = SAFETENSORS_OK;
    const st::file* f = data_source(fn, slice->owner, status);
    if (f == nullptr) return status;
    if (size != slice->plan.byte_size) return size_mismatch(fn, "slice", slice->plan.byte_size, size);
    return status_of(st::read_slice(*f, slice->plan, bytes_of(dst, size)));
  });
}

int safetensors_slice_read_f32(const safetensors_slice* slice, float* dst, size_t count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(slice);
    if (dst == nullptr && count != 0) return fail_argument(fn, "dst is NULL");
    int status = SAFETENSORS_OK;
    const st::file* f = data_source(fn, slice->owner, status);
    if (f == nullptr) return status;
    if (count != slice->element_count) return size_mismatch(fn, "slice's float count", slice->element_count, count);
    std::vector<std::byte> bytes(static_cast<std::size_t>(slice->plan.byte_size));
    if (auto r = st::read_slice(*f, slice->plan, bytes); !r) return fail(r.err());
    return decode(slice->plan.type, bytes, dst, count);
  });
}

int safetensors_decode_f32(int dtype, const void* src, size_t src_size, float* dst, size_t count) {
  return guarded(__func__, [&](const char* fn) {
    if (!valid_dtype(dtype)) return fail_argument(fn, fmt::format("unknown dtype {}", dtype));
    if (src == nullptr && src_size != 0) return fail_argument(fn, "src is NULL");
    if (dst == nullptr && count != 0) return fail_argument(fn, "dst is NULL");
    return decode(static_cast<st::dtype>(dtype), std::span(static_cast<const std::byte*>(src), src_size), dst, count);
  });
}

int safetensors_encode_f32(int dtype, const float* src, size_t count, void* dst, size_t dst_size, unsigned flags) {
  return guarded(__func__, [&](const char* fn) {
    if (!valid_dtype(dtype)) return fail_argument(fn, fmt::format("unknown dtype {}", dtype));
    if (src == nullptr && count != 0) return fail_argument(fn, "src is NULL");
    if (dst == nullptr && dst_size != 0) return fail_argument(fn, "dst is NULL");
    if ((flags & ~(SAFETENSORS_ENCODE_CHECK_RANGE | SAFETENSORS_ENCODE_SATURATE)) != 0) {
      return fail_argument(fn, fmt::format("unknown flags {:#x}", flags));
    }
    st::encode_options options;
    options.check_range = (flags & SAFETENSORS_ENCODE_CHECK_RANGE) != 0;
    options.saturate = (flags & SAFETENSORS_ENCODE_SATURATE) != 0;
    return status_of(
        st::encode_from_f32(static_cast<st::dtype>(dtype), std::span(src, count), bytes_of(dst, dst_size), options));
  });
}

}  // extern "C"
