// SPDX-License-Identifier: Apache-2.0
// The PyTorch fixtures (scripts/fixtures/make_pytorch_fixtures.py) and the values PyTorch
// recorded for them in expected.tsv.
#pragma once

#include <filesystem>
#include <map>
#include <string>
#include <utility>
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

/// hostile/expected.tsv (scripts/fixtures/make_pickle_attack_fixtures.py): each file whose
/// pickle tries to run code, with the first code-execution global its stream names.
std::vector<std::pair<std::string, std::string>> hostile_pickle_files();

/// What every hostile payload would create if it ran.
inline const std::filesystem::path hostile_payload_sentinel = "/tmp/safetensors-pytorch-fixture-pwned";

}  // namespace st_test
