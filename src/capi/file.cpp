// SPDX-License-Identifier: Apache-2.0
// Options, opening (file, buffer, header alone), layout, tensors' entries and metadata.
#include <fmt/format.h>

#include <cstring>

#include "capi/boundary.h"
#include "capi/handles.h"
#include "safetensors/location.h"

namespace st = safetensors;
using namespace safetensors::capi;

st::parse_options safetensors_options::parse() const {
  st::parse_options out;
  out.policy = policy;
  bool overridden = false;
  for (const auto& l : limits) overridden = overridden || l.has_value();
  if (overridden) {
    st::limits caps = st::limits::defaults_for(policy);
    std::array<std::uint64_t*, 5> fields = {&caps.max_header_bytes, &caps.max_tensors, &caps.max_rank,
                                            &caps.max_name_bytes, &caps.max_metadata_bytes};
    for (std::size_t i = 0; i < limits.size(); ++i) {
      if (limits[i]) *fields[i] = *limits[i];
    }
    out.caps = caps;
  }
  return out;
}

namespace {

const safetensors_options default_options;

const safetensors_options& or_default(const safetensors_options* o) { return o != nullptr ? *o : default_options; }

/// Finishes a handle: the NUL-terminated names and the metadata index.
int publish(std::unique_ptr<safetensors_file> handle, safetensors_file** out) {
  const st::header& h = handle->header();
  std::size_t total = 0;
  for (const auto& t : h.tensors()) total += t.name.size() + 1;
  handle->names.reserve(total);
  handle->name_starts.reserve(h.tensors().size());
  for (const auto& t : h.tensors()) {
    handle->name_starts.push_back(handle->names.size());
    handle->names.append(t.name).push_back('\0');
  }
  if (h.metadata()) {
    handle->metadata.reserve(h.metadata()->size());
    for (const auto& entry : *h.metadata()) handle->metadata.push_back(&entry);
  }
  *out = handle.release();
  return SAFETENSORS_OK;
}

}  // namespace

const st::tensor_info* safetensors::capi::tensor_at(const char* fn, const safetensors_file* f, std::size_t index,
                                                    int& status) {
  const auto tensors = f->header().tensors();
  if (index >= tensors.size()) {
    status = fail_argument(fn, fmt::format("tensor index {} out of range ({} tensors)", index, tensors.size()));
    return nullptr;
  }
  status = SAFETENSORS_OK;
  return &tensors[index];
}

extern "C" {

int safetensors_options_new(safetensors_options** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = new safetensors_options();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

void safetensors_options_free(safetensors_options* options) { delete options; }

int safetensors_options_set_backend(safetensors_options* options, int backend) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(options);
    if (backend == SAFETENSORS_BACKEND_MMAP) {
      options->backend = st::io_backend::mmap;
    } else if (backend == SAFETENSORS_BACKEND_PREAD) {
      options->backend = st::io_backend::pread;
    } else {
      return fail_argument(fn, fmt::format("unknown backend {}", backend));
    }
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_options_set_policy(safetensors_options* options, int policy) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(options);
    if (policy < SAFETENSORS_POLICY_REFERENCE || policy > SAFETENSORS_POLICY_LENIENT) {
      return fail_argument(fn, fmt::format("unknown policy {}", policy));
    }
    static_assert(SAFETENSORS_POLICY_STRICT == static_cast<int>(st::validation_policy::strict));
    static_assert(SAFETENSORS_POLICY_LENIENT == static_cast<int>(st::validation_policy::lenient));
    options->policy = static_cast<st::validation_policy>(policy);
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_options_set_limit(safetensors_options* options, int limit, uint64_t value) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(options);
    if (limit < 0 || static_cast<std::size_t>(limit) >= options->limits.size()) {
      return fail_argument(fn, fmt::format("unknown limit {}", limit));
    }
    options->limits[static_cast<std::size_t>(limit)] = value;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_open(const char* path, const safetensors_options* options, safetensors_file** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    SAFETENSORS_C_REQUIRE(path);
    const safetensors_options& o = or_default(options);
    st::open_options open;
    open.backend = o.backend;
    open.parse = o.parse();
    auto f = st::file::open(path, open);
    if (!f) return fail(f.err());
    auto handle = std::make_unique<safetensors_file>();
    handle->file.emplace(std::move(*f));
    return publish(std::move(handle), out);
  });
}

int safetensors_open_buffer(const void* data, size_t size, const safetensors_options* options, safetensors_file** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    if (data == nullptr && size != 0) return fail_argument(fn, "data is NULL");
    auto f = st::file::from_buffer(std::span(static_cast<const std::byte*>(data), size), or_default(options).parse());
    if (!f) return fail(f.err());
    auto handle = std::make_unique<safetensors_file>();
    handle->file.emplace(std::move(*f));
    return publish(std::move(handle), out);
  });
}

int safetensors_header_length(const void* data, size_t size, uint64_t file_size, const safetensors_options* options,
                              uint64_t* header_length) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(header_length);
    if (data == nullptr && size != 0) return fail_argument(fn, "data is NULL");
    auto n = st::read_header_length(std::span(static_cast<const std::byte*>(data), size), file_size,
                                    or_default(options).parse());
    if (!n) return fail(n.err());
    *header_length = *n;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_open_header(const void* data, size_t size, uint64_t file_size, const safetensors_options* options,
                            safetensors_file** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    if (data == nullptr && size != 0) return fail_argument(fn, "data is NULL");
    if (size > file_size) return fail_argument(fn, fmt::format("{} bytes given of a {}-byte file", size, file_size));
    const auto parse = or_default(options).parse();
    const std::span bytes(static_cast<const std::byte*>(data), size);
    auto n = st::read_header_length(bytes, file_size, parse);
    if (!n) return fail(n.err());
    if (*n > size - 8) {
      return fail_argument(fn, fmt::format("the header needs the file's first {} bytes, {} given", *n + 8, size));
    }
    auto h = st::parse_header(bytes.subspan(8, static_cast<std::size_t>(*n)), file_size, parse);
    if (!h) return fail(h.err());
    auto handle = std::make_unique<safetensors_file>();
    handle->header_only = std::move(*h);
    handle->header_only_file_size = file_size;
    return publish(std::move(handle), out);
  });
}

int safetensors_open_url(const char* url, const safetensors_options* options, safetensors_file** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = nullptr;
    SAFETENSORS_C_REQUIRE(url);
    if (!st::is_url(url)) return fail_argument(fn, fmt::format("'{}' is not a URL", url));
    // The location door decides: file:// is the local file; a scheme no provider serves (this
    // library links no HTTP client) is UNSUPPORTED.
    auto at = st::location::resolve(url);
    if (!at) return fail(at.err());
    const safetensors_options& o = or_default(options);
    st::open_options open;
    open.backend = o.backend;
    open.parse = o.parse();
    auto f = at->open_file(open);
    if (!f) return fail(f.err());
    auto handle = std::make_unique<safetensors_file>();
    handle->file.emplace(std::move(*f));
    return publish(std::move(handle), out);
  });
}

void safetensors_close(safetensors_file* file) { delete file; }

int safetensors_file_layout(const safetensors_file* file, uint64_t* header_length, uint64_t* data_start,
                            uint64_t* data_size, uint64_t* file_size) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    const st::header& h = file->header();
    if (header_length != nullptr) *header_length = h.header_length();
    if (data_start != nullptr) *data_start = h.data_start();
    if (data_size != nullptr) *data_size = h.data_size();
    if (file_size != nullptr) *file_size = file->file_size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_warning_count(const safetensors_file* file, size_t* count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(count);
    *count = file->header().warnings().size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_warning_at(const safetensors_file* file, size_t index, const char** message, int* has_offset,
                           uint64_t* offset) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    const auto warnings = file->header().warnings();
    if (index >= warnings.size()) {
      return fail_argument(fn, fmt::format("warning index {} out of range ({} warnings)", index, warnings.size()));
    }
    const st::warning& w = warnings[index];
    if (message != nullptr) *message = w.message.c_str();
    if (has_offset != nullptr) *has_offset = w.offset ? 1 : 0;
    if (offset != nullptr && w.offset) *offset = *w.offset;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_tensor_count(const safetensors_file* file, size_t* count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(count);
    *count = file->header().tensors().size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_tensor_find(const safetensors_file* file, const char* name, size_t* index) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(name);
    SAFETENSORS_C_REQUIRE(index);
    const st::header& h = file->header();
    const st::tensor_info* t = h.find(std::string_view(name, std::strlen(name)));
    if (t == nullptr) {
      return fail(st::make_error(st::error_code::tensor_not_found, fmt::format("no tensor named '{}'", name),
                                 std::nullopt, std::string(name)));
    }
    *index = static_cast<std::size_t>(t - h.tensors().data());
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_tensor_name(const safetensors_file* file, size_t index, const char** name, size_t* length) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(name);
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    *name = file->names.c_str() + file->name_starts[index];
    if (length != nullptr) *length = t->name.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_tensor_dtype(const safetensors_file* file, size_t index, int* dtype) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(dtype);
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    *dtype = static_cast<int>(t->type);
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_tensor_shape(const safetensors_file* file, size_t index, const uint64_t** dims, size_t* rank) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(dims);
    SAFETENSORS_C_REQUIRE(rank);
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    *dims = t->shape.data();
    *rank = t->shape.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_tensor_offsets(const safetensors_file* file, size_t index, uint64_t* begin, uint64_t* end) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    if (begin != nullptr) *begin = t->begin;
    if (end != nullptr) *end = t->end;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_tensor_element_count(const safetensors_file* file, size_t index, uint64_t* count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(count);
    int status = SAFETENSORS_OK;
    const st::tensor_info* t = tensor_at(fn, file, index, status);
    if (t == nullptr) return status;
    *count = t->element_count();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_metadata_count(const safetensors_file* file, size_t* count) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(count);
    *count = file->metadata.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_metadata_at(const safetensors_file* file, size_t index, const char** key, size_t* key_length,
                            const char** value, size_t* value_length) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    if (index >= file->metadata.size()) {
      return fail_argument(fn,
                           fmt::format("metadata index {} out of range ({} entries)", index, file->metadata.size()));
    }
    const auto& [k, v] = *file->metadata[index];
    if (key != nullptr) *key = k.c_str();
    if (key_length != nullptr) *key_length = k.size();
    if (value != nullptr) *value = v.c_str();
    if (value_length != nullptr) *value_length = v.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_metadata_get(const safetensors_file* file, const char* key, const char** value, size_t* value_length) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(file);
    SAFETENSORS_C_REQUIRE(key);
    SAFETENSORS_C_REQUIRE(value);
    *value = nullptr;
    const auto& metadata = file->header().metadata();
    if (!metadata) return static_cast<int>(SAFETENSORS_OK);
    auto it = metadata->find(std::string_view(key, std::strlen(key)));
    if (it == metadata->end()) return static_cast<int>(SAFETENSORS_OK);
    *value = it->second.c_str();
    if (value_length != nullptr) *value_length = it->second.size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

}  // extern "C"
