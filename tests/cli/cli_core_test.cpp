// SPDX-License-Identifier: Apache-2.0
// `safetensors inspect` and `safetensors validate`: output, JSON fields, exit codes.
#include <gtest/gtest.h>
#include <simdjson.h>

#include <cstring>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

std::string quoted_corpus(const std::string& name) {
  return st_test::shell_quote((st_test::conformance_dir() / "format" / name).string());
}

TEST(CliValidate, ValidFileExitsZero) {
  auto r = st_test::run_command(st_test::cli_shell() + " validate " + quoted_corpus("001-minimal-bf16.safetensors"));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find(": ok (3 tensors)"), std::string::npos) << r.out;
}

TEST(CliValidate, JsonLineHasEveryField) {
  auto r = st_test::run_command(st_test::cli_shell() + " validate --json " +
                                quoted_corpus("035-f32-size-mismatch.safetensors"));
  EXPECT_EQ(r.status, 1);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_FALSE(doc["ok"].get_bool().value());
  EXPECT_EQ(doc["code"].get_string().value(), "TensorInvalidInfo");
  EXPECT_TRUE(doc["offset"].is_uint64() || doc["offset"].is_int64());
  EXPECT_TRUE(doc["tensor"].is_string());
  EXPECT_TRUE(doc["warnings"].is_array());
  EXPECT_NE(std::string(doc["message"].get_string().value()).find("invalid shape"), std::string::npos);
}

TEST(CliValidate, LenientReportsTrailingBytesAsWarnings) {
  auto r = st_test::run_command(st_test::cli_shell() + " validate --json --policy lenient " +
                                quoted_corpus("064-trailing-polyglot-bytes.safetensors"));
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_TRUE(doc["ok"].get_bool().value());
  EXPECT_EQ(doc["warnings"].get_array().value().size(), 1U);
  EXPECT_EQ(r.status, 0);
}

TEST(CliValidate, MissingFileIsExitTwoAndUsageErrorsToo) {
  auto missing = st_test::run_command(st_test::cli_shell() + " validate /nonexistent/x.safetensors");
  EXPECT_EQ(missing.status, 2);
  EXPECT_NE(missing.out.find("IoError"), std::string::npos) << missing.out;
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " validate --policy nope x 2>/dev/null").status, 2);
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " validate 2>/dev/null").status, 2);
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " frobnicate 2>/dev/null").status, 2);
  EXPECT_EQ(st_test::run_command(st_test::cli_shell() + " --help").status, 0);
}

TEST(CliInspect, SummaryShowsCountsDtypesAndMetadata) {
  auto r = st_test::run_command(st_test::cli_shell() + " inspect " + quoted_corpus("001-minimal-bf16.safetensors"));
  EXPECT_EQ(r.status, 0);
  EXPECT_NE(r.out.find("tensors:     3"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("format: pt"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("BF16"), std::string::npos);
  EXPECT_NE(r.out.find("aligned to"), std::string::npos);
}

TEST(CliInspect, JsonIsTheParsedHeader) {
  auto r =
      st_test::run_command(st_test::cli_shell() + " inspect --json " + quoted_corpus("001-minimal-bf16.safetensors"));
  EXPECT_EQ(r.status, 0);
  simdjson::dom::parser parser;
  simdjson::dom::element doc;
  ASSERT_EQ(parser.parse(r.out).get(doc), simdjson::SUCCESS) << r.out;
  EXPECT_EQ(doc["__metadata__"]["format"].get_string().value(), "pt");
  simdjson::dom::object top = doc.get_object().value();
  EXPECT_EQ(top.size(), 4U);
}

TEST(CliInspect, InvalidFileIsOneErrorLineWithLocation) {
  auto r = st_test::run_command(st_test::cli_shell() + " inspect " + quoted_corpus("035-f32-size-mismatch.safetensors"),
                                true);
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(r.out.rfind("safetensors: error: ", 0), 0U) << r.out;
  EXPECT_NE(r.out.find("(at byte "), std::string::npos) << r.out;
  EXPECT_NE(r.out.find(", tensor '"), std::string::npos) << r.out;
  EXPECT_EQ(std::count(r.out.begin(), r.out.end(), '\n'), 1);
}

TEST(CliValidate, JsonOutputEscapesLineSeparators) {
  // The tensor name (in the error's message and tensor fields) holds U+2028 and U+2029.
  const std::string json = "{\"a\u2028b\u2029\":{\"dtype\":\"U8\",\"shape\":[1],\"data_offsets\":[1,2]}}  ";
  std::string file(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) file[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  file += json + "xy";
  const auto path = st_test::scratch_dir() / "line-separators.safetensors";
  std::vector<std::byte> bytes(file.size());
  std::memcpy(bytes.data(), file.data(), file.size());
  st_test::write_bytes(path, bytes);
  auto r = st_test::run_command(st_test::shell_quote(st_test::cli_path()) + " validate --json " +
                                st_test::shell_quote(path.string()));
  EXPECT_EQ(r.status, 1);
  EXPECT_NE(r.out.find("a\\u2028b\\u2029"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\u2028"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\u2029"), std::string::npos) << r.out;
}

}  // namespace
