// SPDX-License-Identifier: Apache-2.0
// The conversion pipeline through the C API: options by name, cast in place, format changes,
// progress that cancels, and refused options, each checked with the C++ reader.
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/safetensors_c.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;

fs::path model(const fs::path& path) {
  static const std::vector<float> w{1, 2, 3, 4};
  static const std::vector<std::int32_t> n{5, 6};
  const std::vector<st::tensor_data> tensors{{"layer.w", st::dtype::F32, {4}, std::as_bytes(std::span(w))},
                                             {"n", st::dtype::I32, {2}, std::as_bytes(std::span(n))}};
  EXPECT_OK(st::write_file(path.string(), tensors));
  return path;
}

/// Skips where the library was built without the converters (the functions say UNSUPPORTED).
#define SKIP_WITHOUT_CONVERTERS()                                                           \
  do {                                                                                      \
    safetensors_convert_options* probe = nullptr;                                           \
    if (safetensors_convert_options_new(&probe) == SAFETENSORS_ERR_UNSUPPORTED) {           \
      GTEST_SKIP() << "built without the converters: " << safetensors_last_error_message(); \
    }                                                                                       \
    safetensors_convert_options_free(probe);                                                \
  } while (false)

struct options_handle {
  safetensors_convert_options* p = nullptr;
  options_handle() { EXPECT_EQ(safetensors_convert_options_new(&p), SAFETENSORS_OK); }
  ~options_handle() { safetensors_convert_options_free(p); }
  int set(const char* name, const char* value) const { return safetensors_convert_options_set(p, name, value); }
};

TEST(CApiConvert, CastsInPlaceAndConvertsBetweenFormats) {
  SKIP_WITHOUT_CONVERTERS();
  const auto dir = st_test::scratch_dir();
  const std::string in = model(dir / "m.safetensors").string();
  const char* inputs[] = {in.c_str()};
  options_handle cast;
  ASSERT_EQ(cast.set("dtype", "BF16"), SAFETENSORS_OK);
  ASSERT_EQ(cast.set("replace_input", "1"), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_convert(inputs, 1, in.c_str(), cast.p), SAFETENSORS_OK) << safetensors_last_error_message();
  auto f = st::file::open(in);
  ASSERT_OK(f);
  EXPECT_EQ(f->find("layer.w")->type, st::dtype::BF16);
  EXPECT_EQ(f->find("n")->type, st::dtype::I32);

  const std::string npz = (dir / "m.npz").string();
  ASSERT_EQ(safetensors_convert(inputs, 1, npz.c_str(), nullptr), SAFETENSORS_OK) << safetensors_last_error_message();
  const std::string back = (dir / "back.safetensors").string();
  const char* from_npz[] = {npz.c_str()};
  options_handle select;
  ASSERT_EQ(select.set("only", "n"), SAFETENSORS_OK);
  ASSERT_EQ(select.set("rename", "n=ids"), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_convert(from_npz, 1, back.c_str(), select.p), SAFETENSORS_OK)
      << safetensors_last_error_message();
  auto g = st::file::open(back);
  ASSERT_OK(g);
  ASSERT_EQ(g->tensors().size(), 1U);
  EXPECT_EQ(g->tensors()[0].name, "ids");
}

int stop_at_once(std::uint64_t, std::uint64_t, void* calls) {
  ++*static_cast<int*>(calls);
  return 0;
}

TEST(CApiConvert, ProgressCancelsAndBadOptionsAreNamed) {
  SKIP_WITHOUT_CONVERTERS();
  const auto dir = st_test::scratch_dir();
  const std::string in = model(dir / "m.safetensors").string();
  const std::string out = (dir / "out.safetensors").string();
  const char* inputs[] = {in.c_str()};
  options_handle o;
  int calls = 0;
  ASSERT_EQ(safetensors_convert_options_set_progress(o.p, stop_at_once, &calls), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_convert(inputs, 1, out.c_str(), o.p), SAFETENSORS_ERR_CANCELLED);
  EXPECT_EQ(calls, 1);
  EXPECT_FALSE(fs::exists(out));

  EXPECT_EQ(o.set("colour", "red"), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_NE(std::string(safetensors_last_error_message()).find("unknown option 'colour'"), std::string::npos);
  EXPECT_EQ(o.set("saturate", "maybe"), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(o.set("rename", "a.*=b"), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_convert(inputs, 1, in.c_str(), nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);  // its own input
  EXPECT_EQ(safetensors_convert(nullptr, 1, out.c_str(), nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);
}

// The output budget by name, as Python and the CLI set it: a plan above it is refused before
// anything is written, naming both sizes and the option.
TEST(CApiConvert, MaxOutputSizeRefusesABiggerPlan) {
  SKIP_WITHOUT_CONVERTERS();
  const auto dir = st_test::scratch_dir();
  const std::string in = model(dir / "m.safetensors").string();
  const std::string out = (dir / "out.safetensors").string();
  const char* inputs[] = {in.c_str()};
  options_handle o;
  ASSERT_EQ(o.set("max_output_size", "10"), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_convert(inputs, 1, out.c_str(), o.p), SAFETENSORS_ERR_LIMIT_EXCEEDED);
  const std::string message = safetensors_last_error_message();
  EXPECT_NE(message.find("over the output budget of 10 bytes"), std::string::npos) << message;
  EXPECT_NE(message.find("max_output_size"), std::string::npos) << message;
  EXPECT_FALSE(fs::exists(out));
  ASSERT_EQ(o.set("max_output_size", "1GB"), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_convert(inputs, 1, out.c_str(), o.p), SAFETENSORS_OK) << safetensors_last_error_message();
  EXPECT_EQ(o.set("max_output_size", "much"), SAFETENSORS_ERR_INVALID_ARGUMENT);
}

// Misuses are named by the C key, as the CLI names its flags and Python its keywords
// (pipeline_options_test.cpp): an option set that does not apply is refused even at its
// default value, a bad value says which key, and the budget says which key raises it.
TEST(CApiConvert, MisusesNameTheOptionKey) {
  SKIP_WITHOUT_CONVERTERS();
  const auto dir = st_test::scratch_dir();
  const std::string in = model(dir / "m.safetensors").string();
  const std::string out = (dir / "out.safetensors").string();
  const char* inputs[] = {in.c_str()};
  const auto refused = [&](const char* name, const char* value) {
    options_handle o;
    EXPECT_EQ(o.set(name, value), SAFETENSORS_OK) << name;
    EXPECT_EQ(safetensors_convert(inputs, 1, out.c_str(), o.p), SAFETENSORS_ERR_INVALID_ARGUMENT) << name;
    return std::string(safetensors_last_error_message());
  };
  EXPECT_NE(refused("shared", "keep").find("option 'shared' applies to PyTorch input only (the input is SafeTensors)"),
            std::string::npos);
  EXPECT_NE(refused("compress", "1").find("option 'compress' applies to .npz output only (the output is SafeTensors)"),
            std::string::npos);
  EXPECT_NE(refused("max_ratio", "10").find("option 'max_ratio' applies to .npz input only"), std::string::npos);
  EXPECT_FALSE(fs::exists(out));
  options_handle o;
  EXPECT_EQ(o.set("compress", "0"), SAFETENSORS_OK);  // off: as if not set
  EXPECT_EQ(safetensors_convert(inputs, 1, out.c_str(), o.p), SAFETENSORS_OK) << safetensors_last_error_message();
  EXPECT_EQ(o.set("max_output_size", "0"), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(safetensors_last_error_message(),
               "option 'max_output_size': invalid size '0': must be at least one byte");
  ASSERT_EQ(o.set("max_output_size", "10"), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_convert(inputs, 1, (dir / "big.safetensors").string().c_str(), o.p),
            SAFETENSORS_ERR_LIMIT_EXCEEDED);
  EXPECT_NE(std::string(safetensors_last_error_message()).find("raise the budget with option 'max_output_size'"),
            std::string::npos)
      << safetensors_last_error_message();
  // One file out, as the CLI's and Python's merge, cast and extract: a directory is refused.
  options_handle one_file;
  ASSERT_EQ(one_file.set("one_file_output", "1"), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_convert(inputs, 1, dir.string().c_str(), one_file.p), SAFETENSORS_ERR_IO);
  EXPECT_STREQ(safetensors_last_error_message(), "cannot write the output: Is a directory");
}

}  // namespace
