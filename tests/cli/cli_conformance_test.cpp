// SPDX-License-Identifier: Apache-2.0
// `safetensors validate --json` gives every file of ../shared/conformance/format exactly its
// expected verdict.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <sstream>

#include "support/cli_run.h"
#include "support/conformance.h"
#include "support/paths.h"

namespace {

TEST(CliConformance, ValidateJsonAgreesOnEveryFile) {
  const auto dir = st_test::conformance_dir() / "format";
  auto rows = st_test::load_verdicts();
  ASSERT_FALSE(rows.empty());
  std::string command = st_test::shell_quote(st_test::cli_path()) + " validate --json";
  for (const st_test::verdict_row& row : rows)
    command.append(" ").append(st_test::shell_quote((dir / row.file).string()));
  auto run = st_test::run_command(command);
  EXPECT_EQ(run.status, 1) << "some corpus files are invalid, so validate must exit 1";

  std::map<std::string, std::string> got;
  std::istringstream lines(run.out);
  std::string line;
  simdjson::dom::parser parser;
  while (std::getline(lines, line)) {
    simdjson::dom::element doc;
    ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
    std::string_view file = doc["file"].get_string().value();
    bool ok = doc["ok"].get_bool().value();
    std::string code = ok ? "ok" : std::string(doc["code"].get_string().value());
    EXPECT_EQ(ok, doc["code"].is_null()) << line;
    got[std::filesystem::path(file).filename().string()] = code;
  }
  ASSERT_EQ(got.size(), rows.size());
  for (const st_test::verdict_row& row : rows) EXPECT_EQ(got[row.file], row.expected) << row.file << ": " << row.note;
}

}  // namespace
