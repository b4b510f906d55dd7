// SPDX-License-Identifier: Apache-2.0
// What the C API's opaque handles hold.
#pragma once

#include <array>
#include <optional>
#include <string>
#include <unordered_set>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/header.h"
#include "safetensors/policy.h"
#include "safetensors/slice.h"
#include "safetensors/writer.h"

struct safetensors_options {
  safetensors::io_backend backend = safetensors::io_backend::mmap;
  safetensors::validation_policy policy = safetensors::validation_policy::reference;
  std::array<std::optional<std::uint64_t>, 5> limits;  // by safetensors_limit; unset: the policy's

  [[nodiscard]] safetensors::parse_options parse() const;
};

struct safetensors_file {
  std::optional<safetensors::file> file;  // absent for a header-only handle
  safetensors::header header_only;        // the header when `file` is absent
  std::uint64_t header_only_file_size = 0;
  // NUL-terminated copies of the tensor names (tensor_info's are views without a NUL), one
  // buffer for all, and the metadata entries in key order for access by index.
  std::string names;
  std::vector<std::size_t> name_starts;
  std::vector<const safetensors::metadata_map::value_type*> metadata;

  [[nodiscard]] const safetensors::header& header() const noexcept { return file ? file->header() : header_only; }
  [[nodiscard]] std::uint64_t file_size() const noexcept { return file ? file->file_size() : header_only_file_size; }
};

struct safetensors_slice {
  const safetensors_file* owner = nullptr;
  safetensors::slice_plan plan;
  std::uint64_t element_count = 0;
};

struct safetensors_writer {
  std::vector<safetensors::tensor_data> tensors;
  std::unordered_set<std::string> names;  // of `tensors`: a repeated name is refused when added
  safetensors::write_options options;
};

namespace safetensors::capi {
/// The tensor at `index` of `f`, or nullptr with `status` set to the recorded error.
[[nodiscard]] const tensor_info* tensor_at(const char* fn, const safetensors_file* f, std::size_t index, int& status);
}  // namespace safetensors::capi
