// SPDX-License-Identifier: Apache-2.0
// The conformance corpus's expected verdicts (../shared/conformance/format/verdicts.tsv).
#pragma once

#include <string>
#include <vector>

namespace st_test {

struct verdict_row {
  std::string file;
  std::string reference;  ///< the reference implementation's verdict
  std::string expected;   ///< ours: "ok" or an error code name
  std::string note;
};

/// Every row of verdicts.tsv; fails the current test when the corpus is missing.
std::vector<verdict_row> load_verdicts();

}  // namespace st_test
