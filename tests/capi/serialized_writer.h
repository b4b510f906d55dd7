// SPDX-License-Identifier: Apache-2.0
// A C API writer's whole file in memory, as the C API tests read it back.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <vector>

#include "safetensors/safetensors_c.h"

/// The file `w` describes, from safetensors_writer_serialize (a test failure when it cannot).
inline std::vector<std::byte> serialized(const safetensors_writer* w) {
  std::uint64_t size = 0;
  EXPECT_EQ(safetensors_writer_file_size(w, &size), SAFETENSORS_OK);
  std::vector<std::byte> bytes(size);
  EXPECT_EQ(safetensors_writer_serialize(w, bytes.data(), bytes.size()), SAFETENSORS_OK);
  return bytes;
}
