// SPDX-License-Identifier: Apache-2.0
// A PyTorch file's pickle verdict through the C API: a file that tries to run code is
// refused by safetensors_convert with SAFETENSORS_ERR_CODE_EXECUTION, and
// safetensors_pickle_verdict_open still says what it names; inert objects are listed.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>

#include "safetensors/safetensors_c.h"
#include "support/paths.h"

namespace {

namespace fs = std::filesystem;

std::string torch_fixture(const std::string& name) {
  return (fs::path(SAFETENSORS_SOURCE_DIR) / "tests/fixtures/pytorch" / name).string();
}

struct verdict_handle {
  safetensors_pickle_verdict* p = nullptr;
  int status = SAFETENSORS_OK;
  explicit verdict_handle(const std::string& path) : status(safetensors_pickle_verdict_open(path.c_str(), &p)) {}
  ~verdict_handle() { safetensors_pickle_verdict_free(p); }
};

}  // namespace

TEST(CApiPickleVerdict, AFileThatTriesToRunCodeIsRefusedAndDescribed) {
  const std::string path = torch_fixture("hostile/hand_popped_zip.pt");
  verdict_handle v(path);
  if (v.status == SAFETENSORS_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the converters";
  ASSERT_EQ(v.status, SAFETENSORS_OK) << safetensors_last_error_message();
  EXPECT_EQ(safetensors_pickle_verdict_kind(v.p), SAFETENSORS_PICKLE_RUNS_CODE);
  const char* text = nullptr;
  EXPECT_EQ(safetensors_pickle_verdict_refusal(v.p, &text), SAFETENSORS_ERR_CODE_EXECUTION);
  EXPECT_EQ(std::string(text), path +
                                   ": refused: this file tries to run code: posix.system at byte 2 of "
                                   "archive/data.pkl (at byte 2)");
  ASSERT_EQ(safetensors_pickle_verdict_global_count(v.p), 1u);
  const char* name = nullptr;
  int runs_code = 0;
  uint64_t offset = 0;
  ASSERT_EQ(safetensors_pickle_verdict_global(v.p, 0, &name, &runs_code, &offset), SAFETENSORS_OK);
  EXPECT_STREQ(name, "posix.system");
  EXPECT_EQ(runs_code, 1);
  EXPECT_EQ(offset, 2u);
  EXPECT_EQ(safetensors_pickle_verdict_global(v.p, 1, nullptr, nullptr, nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);

  const auto out = (st_test::scratch_dir() / "out.safetensors").string();
  const char* inputs[] = {path.c_str()};
  EXPECT_EQ(safetensors_convert(inputs, 1, out.c_str(), nullptr), SAFETENSORS_ERR_CODE_EXECUTION);
  EXPECT_EQ(safetensors_last_error_code(), SAFETENSORS_ERR_CODE_EXECUTION);
  EXPECT_STREQ(safetensors_status_name(safetensors_last_error_code()), "CodeExecution");
  uint64_t at = 0;
  EXPECT_EQ(safetensors_last_error_offset(&at), 1);
  EXPECT_EQ(at, 2u);
  EXPECT_FALSE(fs::exists(out));
}

TEST(CApiPickleVerdict, InertObjectsAndArguments) {
  verdict_handle v(torch_fixture("opaque.pt"));
  if (v.status == SAFETENSORS_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the converters";
  ASSERT_EQ(v.status, SAFETENSORS_OK);
  EXPECT_EQ(safetensors_pickle_verdict_kind(v.p), SAFETENSORS_PICKLE_INERT_OBJECTS);
  const char* text = nullptr;
  EXPECT_EQ(safetensors_pickle_verdict_refusal(v.p, &text), SAFETENSORS_OK);
  EXPECT_STREQ(text, "");
  EXPECT_GE(safetensors_pickle_verdict_global_count(v.p), 3u);
  const char* name = nullptr;
  int runs_code = 1;
  ASSERT_EQ(safetensors_pickle_verdict_global(v.p, 0, &name, &runs_code, nullptr), SAFETENSORS_OK);
  EXPECT_STREQ(name, "argparse.Namespace");
  EXPECT_EQ(runs_code, 0);

  safetensors_pickle_verdict* none = nullptr;
  EXPECT_EQ(safetensors_pickle_verdict_open(nullptr, &none), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(none, nullptr);
  EXPECT_EQ(safetensors_pickle_verdict_kind(nullptr), -1);
  EXPECT_EQ(safetensors_pickle_verdict_global_count(nullptr), 0u);
  // A file that is no checkpoint at all: described by its refusal.
  verdict_handle missing(torch_fixture("no-such-file.pt"));
  ASSERT_EQ(missing.status, SAFETENSORS_OK);
  EXPECT_EQ(safetensors_pickle_verdict_refusal(missing.p, nullptr), SAFETENSORS_ERR_IO);
  EXPECT_EQ(safetensors_pickle_verdict_kind(missing.p), SAFETENSORS_PICKLE_ALLOWLISTED);
}
