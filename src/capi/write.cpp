// SPDX-License-Identifier: Apache-2.0
// Writing files from caller buffers through the library's writer (atomic write_file).
#include <fmt/format.h>

#include <cstring>

#include "capi/boundary.h"
#include "capi/handles.h"

namespace st = safetensors;
using namespace safetensors::capi;

namespace {

std::vector<st::tensor_spec> specs_of(const safetensors_writer& w) {
  std::vector<st::tensor_spec> specs;
  specs.reserve(w.tensors.size());
  for (const auto& t : w.tensors) specs.push_back({t.name, t.type, t.shape});
  return specs;
}

}  // namespace

extern "C" {

int safetensors_writer_new(safetensors_writer** out) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(out);
    *out = new safetensors_writer();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

void safetensors_writer_free(safetensors_writer* writer) { delete writer; }

int safetensors_writer_add_tensor(safetensors_writer* writer, const char* name, int dtype, const uint64_t* dims,
                                  size_t rank, const void* data, size_t size) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(writer);
    SAFETENSORS_C_REQUIRE(name);
    if (dims == nullptr && rank != 0) return fail_argument(fn, "dims is NULL");
    if (data == nullptr && size != 0) return fail_argument(fn, "data is NULL");
    if (dtype < 0 || dtype >= st::dtype_count) return fail_argument(fn, fmt::format("unknown dtype {}", dtype));
    // Refused now, with the code a reader gives the file they would make, rather than at write:
    // `__metadata__` is the header's metadata key (InvalidHeaderDeserialization), and a repeated
    // name a repeated JSON key (DuplicateKey).
    if (std::strcmp(name, "__metadata__") == 0) {
      return fail(st::make_error(
          st::error_code::invalid_header_deserialization,
          fmt::format("{}: a tensor cannot be named '__metadata__': it is the header's metadata key", fn), std::nullopt,
          std::string(name)));
    }
    if (writer->names.contains(name)) {
      return fail(st::make_error(st::error_code::duplicate_key, fmt::format("{}: duplicate tensor name '{}'", fn, name),
                                 std::nullopt, std::string(name)));
    }
    st::tensor_data t;
    t.name = name;
    t.type = static_cast<st::dtype>(dtype);
    t.shape.assign(dims, dims + rank);
    t.data = std::span(static_cast<const std::byte*>(data), size);
    // Wrong sizes are reported now, naming the tensor, rather than at write time.
    const st::byte_size_result expected = st::byte_size(t.type, t.shape);
    if (expected.problem == st::size_problem::none && expected.bytes != size) {
      return fail(st::make_error(st::error_code::invalid_argument,
                                 fmt::format("{}: tensor '{}' ({} {}) needs {} bytes, {} given", fn, t.name,
                                             st::dtype_name(t.type), fmt::join(t.shape, "x"), expected.bytes, size),
                                 std::nullopt, t.name));
    }
    writer->names.insert(t.name);
    writer->tensors.push_back(std::move(t));
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_writer_set_metadata(safetensors_writer* writer, const char* key, const char* value) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(writer);
    SAFETENSORS_C_REQUIRE(key);
    SAFETENSORS_C_REQUIRE(value);
    if (!writer->options.metadata) writer->options.metadata.emplace();
    writer->options.metadata->insert_or_assign(std::string(key), std::string(value));
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_writer_set_alignment(safetensors_writer* writer, uint64_t alignment) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(writer);
    if (alignment < 8 || (alignment & (alignment - 1)) != 0) {
      return fail_argument(fn, fmt::format("alignment {} is not a power of two of at least 8", alignment));
    }
    writer->options.alignment = alignment;
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_writer_write(const safetensors_writer* writer, const char* path) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(writer);
    SAFETENSORS_C_REQUIRE(path);
    return status_of(st::write_file(path, writer->tensors, writer->options));
  });
}

int safetensors_writer_file_size(const safetensors_writer* writer, uint64_t* size) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(writer);
    SAFETENSORS_C_REQUIRE(size);
    auto plan = st::write_plan::make(specs_of(*writer), writer->options);
    if (!plan) return fail(plan.err());
    *size = plan->file_size();
    return static_cast<int>(SAFETENSORS_OK);
  });
}

int safetensors_writer_serialize(const safetensors_writer* writer, void* dst, size_t size) {
  return guarded(__func__, [&](const char* fn) {
    SAFETENSORS_C_REQUIRE(writer);
    SAFETENSORS_C_REQUIRE(dst);
    auto bytes = st::serialize(writer->tensors, writer->options);
    if (!bytes) return fail(bytes.err());
    if (bytes->size() != size) {
      return fail_argument(fn, fmt::format("the file needs exactly {} bytes but {} were given", bytes->size(), size));
    }
    std::memcpy(dst, bytes->data(), size);
    return static_cast<int>(SAFETENSORS_OK);
  });
}

}  // extern "C"
