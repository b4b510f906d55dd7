// SPDX-License-Identifier: Apache-2.0
/// \file numpy_file.h
/// An `.npy` or `.npz` file as its list of arrays, whichever it is (told by its first bytes):
/// an `.npy` holds one array, named after the file's stem; an `.npz` one per member. What the
/// NumPy converter and `safetensors inspect` both read.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "safetensors/chunk_sink.h"
#include "safetensors/error.h"
#include "safetensors/formats/npy.h"
#include "safetensors/formats/npz.h"
#include "safetensors/lifetimebound.h"

namespace safetensors::numpy {

class numpy_file {
 public:
  struct array {
    std::string name;
    const npy_header* header = nullptr;
    const npz_array* member = nullptr;  ///< null for an .npy
  };

  /// Opens `path` (`options` apply to an .npz); errors name the path.
  [[nodiscard]] static result<numpy_file> open(const std::string& path, const npz_options& options = {});

  [[nodiscard]] const std::vector<array>& arrays() const& SAFETENSORS_LIFETIMEBOUND { return arrays_; }
  const std::vector<array>& arrays() const&& = delete;
  [[nodiscard]] bool is_npz() const noexcept { return npz_.has_value(); }
  /// Where the array's data (as the file has it: any order and byte order) starts in the
  /// file; nullopt for a deflated .npz member.
  [[nodiscard]] std::optional<std::uint64_t> data_offset(const array& a) const noexcept;

  /// Passes the array's data in SafeTensors order (C order, little-endian) to `sink` in chunks
  /// of at most 1 MiB: an .npz member is inflated as it goes, never held whole.
  [[nodiscard]] status read_chunks(const array& a, const chunk_sink& sink) const;

 private:
  std::optional<npy_file> npy_;
  std::optional<npz_archive> npz_;
  std::vector<array> arrays_;
};

}  // namespace safetensors::numpy
