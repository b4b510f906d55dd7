// SPDX-License-Identifier: Apache-2.0
#include "support/conformance.h"

#include <fstream>
#include <sstream>

#include "support/paths.h"

namespace st_test {

std::vector<verdict_row> load_verdicts() {
  std::vector<verdict_row> rows;
  std::ifstream in(st_test::conformance_dir() / "format" / "verdicts.tsv");
  std::string line;
  std::getline(in, line);  // column names
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    std::istringstream fields(line);
    verdict_row r;
    std::getline(fields, r.file, '\t');
    std::getline(fields, r.reference, '\t');
    std::getline(fields, r.expected, '\t');
    std::getline(fields, r.note, '\t');
    rows.push_back(r);
  }
  return rows;
}

}  // namespace st_test
