// SPDX-License-Identifier: Apache-2.0
// The PyTorch fixtures (scripts/fixtures/make_pytorch_fixtures.py) and the values PyTorch
// recorded for them in expected.tsv.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <vector>

namespace st_test {

struct expected_torch_tensor {
  std::string dtype;   ///< "F32", ...
  std::string shape;   ///< "[2,3]"
  std::string sha256;  ///< of the contiguous little-endian bytes
};

struct torch_expectations {
  std::map<std::string, std::map<std::string, expected_torch_tensor>> tensors;  ///< fixture -> name -> value
  std::map<std::string, std::vector<std::string>> skipped;                      ///< fixture -> names, sorted
};

std::filesystem::path pytorch_fixture(const std::string& name);
const torch_expectations& pytorch_expected();
std::string shape_text(const std::vector<std::uint64_t>& shape);

}  // namespace st_test
