// SPDX-License-Identifier: Apache-2.0
/// \file multi_range_reader.h
/// A range reader that fetches many ranges at once (remote::http_source sends them in few
/// requests): slice reads and the loader hand it a slice's runs whole instead of calling
/// read() once per run.
#pragma once

#include <cstddef>
#include <span>

#include "safetensors/range_reader.h"
#include "safetensors/slice.h"

namespace safetensors {

class multi_range_reader : public range_reader {
 public:
  /// Fills `destination` with `ranges` back to back (it holds exactly their total length;
  /// every range is inside the file).
  [[nodiscard]] virtual status read_ranges(std::span<const byte_range> ranges,
                                           std::span<std::byte> destination) const = 0;
};

}  // namespace safetensors
