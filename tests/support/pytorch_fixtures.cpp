// SPDX-License-Identifier: Apache-2.0
#include "support/pytorch_fixtures.h"

#include <cstdint>
#include <fstream>
#include <sstream>

namespace st_test {

std::filesystem::path pytorch_fixture(const std::string& name) {
  return std::filesystem::path(SAFETENSORS_SOURCE_DIR) / "tests/fixtures/pytorch" / name;
}

// expected.tsv: fixture, name, dtype, [shape], sha256 (or fixture, name, "skipped").
const torch_expectations& pytorch_expected() {
  static const torch_expectations all = [] {
    torch_expectations e;
    std::ifstream in(pytorch_fixture("expected.tsv"));
    std::string line;
    while (std::getline(in, line)) {
      std::vector<std::string> f;
      std::stringstream ss(line);
      for (std::string field; std::getline(ss, field, '\t');) f.push_back(field);
      if (f.size() == 3 && f[2] == "skipped") e.skipped[f[0]].push_back(f[1]);
      if (f.size() == 5) e.tensors[f[0]][f[1]] = {f[2], f[3], f[4]};
    }
    return e;
  }();
  return all;
}

std::string shape_text(const std::vector<std::uint64_t>& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i != 0) s += ',';
    s += std::to_string(shape[i]);
  }
  return s + "]";
}

std::vector<std::pair<std::string, std::string>> hostile_pickle_files() {
  std::vector<std::pair<std::string, std::string>> files;
  std::ifstream in(pytorch_fixture("hostile/expected.tsv"));
  std::string line;
  while (std::getline(in, line)) {
    const auto tab = line.find('\t');
    if (tab != std::string::npos) files.emplace_back(line.substr(0, tab), line.substr(tab + 1));
  }
  return files;
}

}  // namespace st_test
