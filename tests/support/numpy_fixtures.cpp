// SPDX-License-Identifier: Apache-2.0
#include "support/numpy_fixtures.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

namespace st_test {

std::filesystem::path numpy_fixture(const std::string& name) {
  return std::filesystem::path(SAFETENSORS_SOURCE_DIR) / "tests" / "fixtures" / "numpy" / name;
}

const std::vector<numpy_expectation>& numpy_expectations() {
  static const std::vector<numpy_expectation> all = [] {
    std::vector<numpy_expectation> out;
    std::ifstream in(numpy_fixture("expected.txt"));
    std::string line;
    while (std::getline(in, line)) {
      std::istringstream fields(line);
      numpy_expectation e;
      std::string shape;
      fields >> e.file >> e.member >> e.dtype >> shape >> e.hex;
      if (e.hex == "-") e.hex.clear();
      if (shape != "scalar") {
        std::istringstream dims(shape);
        std::string dim;
        while (std::getline(dims, dim, ',')) e.shape.push_back(std::stoull(dim));
      }
      out.push_back(std::move(e));
    }
    return out;
  }();
  return all;
}

std::string hex(std::span<const std::byte> bytes) {
  std::string out;
  out.reserve(bytes.size() * 2);
  for (const auto b : bytes) out += fmt::format("{:02x}", std::to_integer<unsigned>(b));
  return out;
}

}  // namespace st_test
