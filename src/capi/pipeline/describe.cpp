// SPDX-License-Identifier: Apache-2.0
// A file as `safetensors inspect` describes it, through the C API: the format table's rows
// (safetensors/pipeline/format_table.h), the same as the CLI's and Python's. Without the
// converters the functions fail with SAFETENSORS_ERR_UNSUPPORTED (same ABI).
#include <string>

#include "capi/boundary.h"
#include "safetensors/safetensors_c.h"

using namespace safetensors::capi;

#if SAFETENSORS_C_HAVE_PIPELINES
#include <fmt/format.h>

#include "safetensors/pipeline/format_table.h"

namespace sp = safetensors::pipeline;

struct safetensors_description {
  std::string id;
  sp::format_description d;
  std::string refusal_text;
};

namespace {

/// The row's description of `path`; UNSUPPORTED for a file no row describes.
safetensors::result<safetensors_description> description_of(const std::string& path) {
  auto row = sp::format_of_file(path);
  if (!row) return std::move(row).err().with_path(path);
  if (*row == nullptr || !(*row)->describe) {
    const std::string what = *row == nullptr
                                 ? "not a format the library describes"
                                 : fmt::format("{} files are read with safetensors_open, not described", (*row)->name);
    return safetensors::make_error(safetensors::error_code::unsupported, what).with_path(path);
  }
  auto d = (*row)->describe(path, sp::description_style::rows);
  if (!d) return std::move(d).err();
  safetensors_description out{(*row)->id, std::move(d).value(), {}};
  if (out.d.refusal) out.refusal_text = out.d.refusal->to_string();
  return out;
}

}  // namespace

extern "C" {

int safetensors_describe(const char* path, safetensors_description** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    SAFETENSORS_C_REQUIRE(path);
    auto d = description_of(path);
    if (!d) return fail(d.err());
    *out = new safetensors_description(std::move(d).value());
    return static_cast<int>(SAFETENSORS_OK);
  });
}

void safetensors_description_free(safetensors_description* description) { delete description; }

int safetensors_description_format(const safetensors_description* description, const char** id, const char** format,
                                   const char** extra_title) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(description);
    if (id != nullptr) *id = description->id.c_str();
    if (format != nullptr) *format = description->d.format.c_str();
    if (extra_title != nullptr) *extra_title = description->d.extra_title.c_str();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

size_t safetensors_description_tensor_count(const safetensors_description* description) {
  return description == nullptr ? 0 : description->d.tensors.size();
}

int safetensors_description_tensor(const safetensors_description* description, size_t index, const char** name,
                                   const char** dtype, const uint64_t** dims, size_t* rank, uint64_t* bytes,
                                   uint64_t* elements, const char** extra) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(description);
    const auto& tensors = description->d.tensors;
    if (index >= tensors.size()) return fail_argument(fn, "index is past the last tensor");
    const auto& t = tensors[index];
    if (name != nullptr) *name = t.name.c_str();
    if (dtype != nullptr) *dtype = t.type.c_str();
    if (dims != nullptr) *dims = t.shape.data();
    if (rank != nullptr) *rank = t.shape.size();
    if (bytes != nullptr) *bytes = t.bytes;
    if (elements != nullptr) *elements = t.elements;
    if (extra != nullptr) *extra = t.extra.c_str();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_description_tensor_data(const safetensors_description* description, size_t index, uint64_t* offset,
                                        uint64_t* length, const char** dtype) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(description);
    const auto& tensors = description->d.tensors;
    if (index >= tensors.size()) return fail_argument(fn, "index is past the last tensor");
    const auto& t = tensors[index];
    if (!t.data) return fail_plain(SAFETENSORS_ERR_UNSUPPORTED, t.no_data);
    if (offset != nullptr) *offset = t.data->offset;
    if (length != nullptr) *length = t.data->length;
    if (dtype != nullptr) *dtype = safetensors::dtype_name(t.data->type).data();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

size_t safetensors_description_metadata_count(const safetensors_description* description) {
  return description == nullptr ? 0 : description->d.metadata.size();
}

int safetensors_description_metadata(const safetensors_description* description, size_t index, const char** key,
                                     const char** value) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(description);
    const auto& metadata = description->d.metadata;
    if (index >= metadata.size()) return fail_argument(fn, "index is past the last metadata entry");
    if (key != nullptr) *key = metadata[index].first.c_str();
    if (value != nullptr) *value = metadata[index].second.c_str();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

size_t safetensors_description_note_count(const safetensors_description* description) {
  return description == nullptr ? 0 : description->d.notes.size();
}

int safetensors_description_note(const safetensors_description* description, size_t index, const char** note) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(description);
    const auto& notes = description->d.notes;
    if (index >= notes.size()) return fail_argument(fn, "index is past the last note");
    if (note != nullptr) *note = notes[index].c_str();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_description_refusal(const safetensors_description* description, const char** text) {
  if (description == nullptr) return SAFETENSORS_ERR_INVALID_ARGUMENT;
  if (text != nullptr) *text = description->refusal_text.c_str();
  if (!description->d.refusal) return SAFETENSORS_OK;
  return static_cast<int>(description->d.refusal->code) + 1;  // the C status (names.cpp checks the numbering)
}

}  // extern "C"

#else  // built without the converters

struct safetensors_description {};

extern "C" {
int safetensors_describe(const char* /*path*/, safetensors_description** out) {
  if (out != nullptr) *out = nullptr;
  return fail_plain(SAFETENSORS_ERR_UNSUPPORTED,
                    "safetensors_describe: this build has no converters (SAFETENSORS_BUILD_FORMATS=OFF)");
}
void safetensors_description_free(safetensors_description* description) { delete description; }
int safetensors_description_format(const safetensors_description*, const char**, const char**, const char**) {
  return SAFETENSORS_ERR_INVALID_ARGUMENT;
}
size_t safetensors_description_tensor_count(const safetensors_description*) { return 0; }
int safetensors_description_tensor(const safetensors_description*, size_t, const char**, const char**, const uint64_t**,
                                   size_t*, uint64_t*, uint64_t*, const char**) {
  return SAFETENSORS_ERR_INVALID_ARGUMENT;
}
int safetensors_description_tensor_data(const safetensors_description*, size_t, uint64_t*, uint64_t*, const char**) {
  return SAFETENSORS_ERR_INVALID_ARGUMENT;
}
size_t safetensors_description_metadata_count(const safetensors_description*) { return 0; }
int safetensors_description_metadata(const safetensors_description*, size_t, const char**, const char**) {
  return SAFETENSORS_ERR_INVALID_ARGUMENT;
}
size_t safetensors_description_note_count(const safetensors_description*) { return 0; }
int safetensors_description_note(const safetensors_description*, size_t, const char**) {
  return SAFETENSORS_ERR_INVALID_ARGUMENT;
}
int safetensors_description_refusal(const safetensors_description*, const char** text) {
  if (text != nullptr) *text = "";
  return SAFETENSORS_ERR_INVALID_ARGUMENT;
}
}  // extern "C"

#endif
