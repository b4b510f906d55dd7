// SPDX-License-Identifier: Apache-2.0
// Every file of ../shared/conformance/format must get exactly its `expected` verdict,
// through every way of reading it, and through `safetensors validate --json`.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <map>
#include <sstream>

#include "safetensors/file.h"
#include "support/paths.h"

namespace {

struct verdict_row {
  std::string file;
  std::string reference;
  std::string expected;
  std::string note;
};

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

template <class Result>
std::string verdict_of(const Result& r) {
  return r ? "ok" : std::string(safetensors::error_code_name(r.err().code));
}

TEST(Conformance, CorpusIsComplete) {
  auto rows = load_verdicts();
  EXPECT_EQ(rows.size(), 149U);
}

TEST(Conformance, EveryFileGetsItsVerdictThroughEveryReader) {
  const auto dir = st_test::conformance_dir() / "format";
  auto rows = load_verdicts();
  ASSERT_FALSE(rows.empty());
  for (const verdict_row& row : rows) {
    SCOPED_TRACE(row.file + " (" + row.note + ")");
    const std::string path = (dir / row.file).string();
    auto bytes = st_test::read_bytes(path);
    EXPECT_EQ(verdict_of(safetensors::parse_file_bytes(bytes)), row.expected);
    EXPECT_EQ(verdict_of(safetensors::file::from_buffer(bytes)), row.expected);
    for (auto backend : {safetensors::io_backend::mmap, safetensors::io_backend::pread}) {
      safetensors::open_options o;
      o.backend = backend;
      auto f = safetensors::file::open(path, o);
      EXPECT_EQ(verdict_of(f), row.expected) << safetensors::backend_name(backend);
      if (!f) {
        EXPECT_EQ(f.err().path, path);
      }
    }
    EXPECT_EQ(verdict_of(safetensors::read_header(path)), row.expected) << "header-only";
  }
}

TEST(Conformance, ValidateJsonAgreesOnEveryFile) {
  const auto dir = st_test::conformance_dir() / "format";
  auto rows = load_verdicts();
  ASSERT_FALSE(rows.empty());
  std::string command = st_test::shell_quote(st_test::cli_path()) + " validate --json";
  for (const verdict_row& row : rows) command.append(" ").append(st_test::shell_quote((dir / row.file).string()));
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
  for (const verdict_row& row : rows) EXPECT_EQ(got[row.file], row.expected) << row.file << ": " << row.note;
}

}  // namespace
