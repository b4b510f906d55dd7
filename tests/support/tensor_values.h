// SPDX-License-Identifier: Apache-2.0
// What a test compares a written tensor by: its values as floats, or its bytes' SHA-256.
#pragma once

#include <gtest/gtest.h>

#include <cstddef>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/file.h"
#include "safetensors/sha256.h"
#include "support/status_matchers.h"

namespace st_test {

/// Tensor `name` of `f` decoded to float32 (any float dtype); a test failure when it is missing.
inline std::vector<float> floats_of(const safetensors::file& f, std::string_view name) {
  const auto* t = f.find(name);
  EXPECT_NE(t, nullptr) << name;
  if (t == nullptr) return {};
  auto bytes = f.load(name);
  EXPECT_OK(bytes);
  if (!bytes) return {};
  std::vector<float> out(t->element_count());
  EXPECT_OK(safetensors::decode_to_f32(t->type, *bytes, out));
  return out;
}

/// Lower-case hex SHA-256 of `bytes`, as the fixtures' expected values give it.
inline std::string sha256_of(std::span<const std::byte> bytes) {
  auto hash = safetensors::sha256_hasher::create();
  EXPECT_OK(hash);
  if (!hash) return {};
  hash->update(bytes);
  return safetensors::to_hex(hash->finish());
}

}  // namespace st_test
