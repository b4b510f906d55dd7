// SPDX-License-Identifier: Apache-2.0
// Through the C API, every file of the conformance corpus gets the library's verdict (code,
// message, offset, tensor, path) under each policy and each way of opening, and the CLI's
// (`safetensors validate --json`: code, offset, tensor).
#include <gtest/gtest.h>
#include <simdjson.h>

#include <map>
#include <optional>
#include <sstream>

#include "safetensors/file.h"
#include "safetensors/safetensors_c.h"
#include "support/conformance.h"
#include "support/paths.h"

namespace {

struct verdict {
  std::string code;  // "ok" or the error code's name
  std::string message;
  std::optional<std::uint64_t> offset;
  std::optional<std::string> tensor;
  std::string path;

  friend bool operator==(const verdict&, const verdict&) = default;
};

std::ostream& operator<<(std::ostream& out, const verdict& v) {
  return out << v.code << " '" << v.message << "' offset " << (v.offset ? std::to_string(*v.offset) : "-") << " tensor "
             << v.tensor.value_or("-") << " path '" << v.path << "'";
}

template <class Result>
verdict library_verdict(const Result& r) {
  if (r) return {"ok", "", {}, {}, ""};
  const safetensors::error& e = r.err();
  return {std::string(safetensors::error_code_name(e.code)), e.message, e.offset, e.tensor, e.path};
}

/// The verdict of a C call's status, from the thread's last error; closes the handle the call
/// gave (a pointer to it: the call's arguments are evaluated before it sets the handle).
verdict c_verdict(int status, safetensors_file* const* handle) {
  if (status == SAFETENSORS_OK) {
    EXPECT_NE(*handle, nullptr);
    safetensors_close(*handle);
    return {"ok", "", {}, {}, ""};
  }
  EXPECT_EQ(*handle, nullptr);
  EXPECT_EQ(safetensors_last_error_code(), status);
  verdict v{safetensors_status_name(status),
            std::string(safetensors_last_error_message(), safetensors_last_error_message_length()),
            {},
            {},
            safetensors_last_error_path()};
  std::uint64_t offset = 0;
  if (safetensors_last_error_offset(&offset) != 0) v.offset = offset;
  if (const char* t = safetensors_last_error_tensor())
    v.tensor = std::string(t, safetensors_last_error_tensor_length());
  return v;
}

const std::vector<std::pair<int, safetensors::validation_policy>> policies = {
    {SAFETENSORS_POLICY_REFERENCE, safetensors::validation_policy::reference},
    {SAFETENSORS_POLICY_STRICT, safetensors::validation_policy::strict},
    {SAFETENSORS_POLICY_LENIENT, safetensors::validation_policy::lenient},
};

TEST(CApiConformance, EveryFileGetsTheLibrarysVerdictEveryWay) {
  const auto dir = st_test::conformance_dir() / "format";
  const auto rows = st_test::load_verdicts();
  ASSERT_EQ(rows.size(), 149U);
  std::map<std::string, int> verdict_counts;
  for (const auto& [c_policy, policy] : policies) {
    safetensors_options* options = nullptr;
    ASSERT_EQ(safetensors_options_new(&options), SAFETENSORS_OK);
    ASSERT_EQ(safetensors_options_set_policy(options, c_policy), SAFETENSORS_OK);
    safetensors::parse_options parse;
    parse.policy = policy;
    for (const st_test::verdict_row& row : rows) {
      SCOPED_TRACE(row.file + " under " + std::string(safetensors::policy_name(policy)));
      const std::string path = (dir / row.file).string();
      const auto bytes = st_test::read_bytes(path);
      for (auto [c_backend, backend] : {std::pair{SAFETENSORS_BACKEND_MMAP, safetensors::io_backend::mmap},
                                        std::pair{SAFETENSORS_BACKEND_PREAD, safetensors::io_backend::pread}}) {
        ASSERT_EQ(safetensors_options_set_backend(options, c_backend), SAFETENSORS_OK);
        safetensors::open_options open;
        open.backend = backend;
        open.parse = parse;
        const verdict expected = library_verdict(safetensors::file::open(path, open));
        safetensors_file* f = nullptr;
        EXPECT_EQ(c_verdict(safetensors_open(path.c_str(), options, &f), &f), expected);
        if (policy == safetensors::validation_policy::reference) {
          EXPECT_EQ(expected.code, row.expected);
          ++verdict_counts[expected.code];
        }
      }
      const verdict in_memory = library_verdict(safetensors::file::from_buffer(bytes, parse));
      safetensors_file* f = nullptr;
      EXPECT_EQ(c_verdict(safetensors_open_buffer(bytes.data(), bytes.size(), options, &f), &f), in_memory);
      // The header alone, given the whole file (the header parse must agree with the buffer).
      EXPECT_EQ(c_verdict(safetensors_open_header(bytes.data(), bytes.size(), bytes.size(), options, &f), &f).code,
                in_memory.code);
    }
    safetensors_options_free(options);
  }
  EXPECT_GT(verdict_counts["ok"], 10);
  EXPECT_GT(verdict_counts.size(), 8U) << "the corpus covers many error codes";
}

#ifdef SAFETENSORS_CLI_PATH
TEST(CApiConformance, AgreesWithTheCliUnderEveryPolicy) {
  const auto dir = st_test::conformance_dir() / "format";
  const auto rows = st_test::load_verdicts();
  ASSERT_FALSE(rows.empty());
  simdjson::dom::parser parser;
  for (const auto& [c_policy, policy] : policies) {
    const std::string name(safetensors::policy_name(policy));
    std::string command = st_test::shell_quote(SAFETENSORS_CLI_PATH) + " validate --json --policy " + name;
    for (const auto& row : rows) command += " " + st_test::shell_quote((dir / row.file).string());
    const auto run = st_test::run_command(command);
    ASSERT_EQ(run.status, 1) << "validate --policy " << name << ": some corpus files are invalid under every policy";
    std::istringstream lines(run.out);
    std::size_t compared = 0;
    safetensors_options* options = nullptr;
    ASSERT_EQ(safetensors_options_new(&options), SAFETENSORS_OK);
    ASSERT_EQ(safetensors_options_set_policy(options, c_policy), SAFETENSORS_OK);
    for (std::string line; std::getline(lines, line);) {
      simdjson::dom::element doc;
      ASSERT_EQ(parser.parse(line).get(doc), simdjson::SUCCESS) << line;
      const std::string file(doc["file"].get_string().value());
      SCOPED_TRACE(file + " under " + name);
      safetensors_file* f = nullptr;
      const verdict got = c_verdict(safetensors_open(file.c_str(), options, &f), &f);
      EXPECT_EQ(got.code, doc["ok"].get_bool().value() ? "ok" : std::string(doc["code"].get_string().value()));
      std::optional<std::uint64_t> offset;
      if (!doc["offset"].is_null()) offset = doc["offset"].get_uint64().value();
      EXPECT_EQ(got.offset, offset);
      // One framing verdict, words included: a length-prefix error reads as the CLI's
      // ("empty file", "this is a GGUF file", "file is truncated: ...").
      if (got.code != "ok") {
        EXPECT_EQ(got.message, std::string(doc["message"].get_string().value()));
      }
      std::optional<std::string> tensor;
      if (!doc["tensor"].is_null()) tensor = std::string(doc["tensor"].get_string().value());
      EXPECT_EQ(got.tensor, tensor);
      ++compared;
    }
    safetensors_options_free(options);
    EXPECT_EQ(compared, rows.size());
  }
}
#endif

}  // namespace
