// SPDX-License-Identifier: Apache-2.0
// tests/fixtures/numpy and its expected.txt (written by scripts/fixtures/make_numpy_fixtures.py).
#pragma once

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <span>
#include <string>
#include <vector>

namespace st_test {

/// One array NumPy wrote, with the C-order little-endian bytes it must read as.
struct numpy_expectation {
  std::string file;
  std::string member;  ///< array name in an .npz, "-" for an .npy
  std::string dtype;   ///< SafeTensors dtype name
  std::vector<std::uint64_t> shape;
  std::string hex;  ///< "" for an empty array
};

/// The fixture with ZIP64 central-directory records (see numpy_npz_test.cpp).
inline constexpr const char* numpy_zip64_fixture = "zip64.npz";

std::filesystem::path numpy_fixture(const std::string& name);
const std::vector<numpy_expectation>& numpy_expectations();
std::string hex(std::span<const std::byte> bytes);

}  // namespace st_test
