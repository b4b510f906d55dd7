// SPDX-License-Identifier: Apache-2.0
// Every file of ../shared/conformance/format must get exactly its `expected` verdict,
// through every way of reading it (`safetensors validate --json`: cli_conformance_test.cpp).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <fstream>
#include <map>
#include <sstream>

#include "safetensors/file.h"
#include "support/conformance.h"
#include "support/paths.h"

namespace {

template <class Result>
std::string verdict_of(const Result& r) {
  return r ? "ok" : std::string(safetensors::error_code_name(r.err().code));
}

TEST(Conformance, CorpusIsComplete) {
  auto rows = st_test::load_verdicts();
  EXPECT_EQ(rows.size(), 149U);
}

TEST(Conformance, EveryFileGetsItsVerdictThroughEveryReader) {
  const auto dir = st_test::conformance_dir() / "format";
  auto rows = st_test::load_verdicts();
  ASSERT_FALSE(rows.empty());
  for (const st_test::verdict_row& row : rows) {
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

}  // namespace
