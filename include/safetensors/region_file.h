// SPDX-License-Identifier: Apache-2.0
/// \file region_file.h
/// The file behind a streaming writer (SafeTensors' stream_writer, GGUF's): its header is
/// written at creation; then each region (one per tensor, at a fixed offset) is filled by
/// chunks in order, in any order of regions. It is published atomically (atomic_file.h),
/// and only when every region is full; a chunk past a region's end abandons the file.
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/atomic_file.h"
#include "safetensors/error.h"

namespace safetensors {

class region_file {
 public:
  struct region {
    std::uint64_t offset = 0;  ///< where it starts in the file
    std::uint64_t size = 0;
  };

  /// Creates the temporary beside `path`, sized `file_size`, and writes `header` at its start.
  [[nodiscard]] static result<region_file> create(const std::string& path, std::uint64_t file_size,
                                                  std::span<const std::byte> header, std::vector<region> regions);

  /// Writes the next bytes of region `index`; `name` names it in errors. Too many bytes
  /// abandon the file (InvalidArgument), an I/O error is returned with the tensor named.
  [[nodiscard]] status append(std::size_t index, std::string_view name, std::span<const std::byte> chunk);

  /// Publishes the file when every region is full; otherwise abandons it and fails
  /// (InvalidArgument) naming the first short region through `name_of(index)`.
  template <class NameOf>
  [[nodiscard]] status commit(NameOf&& name_of) {
    for (std::size_t i = 0; i < regions_.size(); ++i) {
      if (filled_[i] != regions_[i].size) return incomplete(i, name_of(i));
    }
    return out_.commit();
  }

  /// Removes the temporary. Safe to call twice.
  void abort() noexcept { out_.abort(); }

 private:
  region_file(atomic_file out, std::vector<region> regions);
  [[nodiscard]] error incomplete(std::size_t index, std::string_view name);

  atomic_file out_;
  std::vector<region> regions_;
  std::vector<std::uint64_t> filled_;  // bytes written so far, per region
};

}  // namespace safetensors
