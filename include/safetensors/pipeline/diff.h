// SPDX-License-Identifier: Apache-2.0
// Comparing two SafeTensors files: names, dtypes, shapes, `__metadata__` and values, where
// values match when |a - b| <= atol + rtol * |b| (NaN equals NaN), as numpy's allclose with
// equal_nan. Read in bounded chunks from any backend (a remote file included); identical
// bytes are not decoded. The CLI's `diff` prints the report; Python returns it as a dict.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "safetensors/dtype.h"
#include "safetensors/error.h"
#include "safetensors/file.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

struct diff_options {
  double rtol = 0;             ///< relative tolerance, against |b|
  double atol = 0;             ///< absolute tolerance
  bool ignore_dtype = false;   ///< a dtype change alone is no difference: values decide (across a cast)
  progress_callback progress;  ///< bytes of both files read / total; returning false cancels
};

/// A `__metadata__` key that differs; nullopt on the side that lacks it.
struct metadata_difference {
  std::string key;
  std::optional<std::string> a;
  std::optional<std::string> b;
};

/// A tensor present in both files.
struct tensor_difference {
  std::string name;
  dtype type_a = dtype::F32;
  dtype type_b = dtype::F32;
  std::vector<std::uint64_t> shape_a;
  std::vector<std::uint64_t> shape_b;
  bool dtype_counts = true;       ///< false with ignore_dtype
  bool compared = false;          ///< values were compared (same shape; C64 only against C64)
  std::uint64_t values = 0;       ///< values compared (C64: two per element)
  std::uint64_t mismatched = 0;   ///< values outside the tolerance
  double max_abs = 0;             ///< largest |a - b| (infinity against a NaN)
  double max_rel = 0;             ///< largest |a - b| / |b|
  std::uint64_t first_index = 0;  ///< of the first mismatch, in values
  double first_a = 0;
  double first_b = 0;

  [[nodiscard]] bool dtype_differs() const noexcept { return type_a != type_b; }
  [[nodiscard]] bool shape_differs() const noexcept { return shape_a != shape_b; }
  [[nodiscard]] bool values_match() const noexcept { return compared && mismatched == 0; }
  [[nodiscard]] bool differs() const noexcept {
    return (dtype_differs() && dtype_counts) || shape_differs() || mismatched > 0;
  }
};

struct diff_report {
  std::vector<std::string> only_in_a;  ///< in A's order
  std::vector<std::string> only_in_b;  ///< in B's order
  std::vector<metadata_difference> metadata;
  std::vector<tensor_difference> tensors;  ///< every tensor in both, in A's order

  [[nodiscard]] std::size_t differing() const noexcept;
  [[nodiscard]] bool equal() const noexcept;
};

/// Compares `a` with `b` (the reference of rtol). InvalidArgument for a negative or NaN
/// tolerance; read errors name the file and tensor.
[[nodiscard]] result<diff_report> diff(const file& a, const file& b, const diff_options& options = {});

/// The same for two paths, opened with the pread backend (nothing mapped).
[[nodiscard]] result<diff_report> diff(const std::string& a, const std::string& b, const diff_options& options = {});

}  // namespace safetensors::pipeline
