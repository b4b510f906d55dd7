// SPDX-License-Identifier: Apache-2.0
// One option model (issue 35, item 4): set_option records which options were given, the
// library checks them once for every face, and names each as the caller spells it (the C
// API's keys, Python's keywords, the CLI's flags); the output is checked once, also where a
// command writes one file only (one_file_output).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/pipeline/convert.h"
#include "safetensors/pipeline/option_names.h"
#include "safetensors/writer.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

/// w [2] F32.
fs::path two_floats(const fs::path& path) {
  static const std::vector<float> w{1, 2};
  const std::vector<st::tensor_data> tensors{{"w", st::dtype::F32, {2}, std::as_bytes(std::span(w))}};
  EXPECT_OK(st::write_file(path.string(), tensors));
  return path;
}

/// Options named as `names`, with `name` set to `value`.
sp::convert_options set_one(const sp::option_names& names, const char* name, const char* value) {
  sp::convert_options o;
  o.names = names;
  EXPECT_OK(sp::set_option(o, name, value));
  return o;
}

TEST(PipelineOptions, EachFaceSpellsTheOptionsItsWay) {
  EXPECT_EQ(sp::option_names::keys()("max_output_size"), "option 'max_output_size'");
  EXPECT_EQ(sp::option_names::keywords()("max_output_size"), "max_output_size=");
  auto flags = sp::option_names::flags();
  EXPECT_EQ(flags("max_output_size"), "--max-output-size");
  flags.rename("hash_long_names", "--rename-long");
  EXPECT_EQ(flags("hash_long_names"), "--rename-long");
  EXPECT_EQ(sp::convert_options().names("key"), "option 'key'") << "the C API's keys by default";
}

TEST(PipelineOptions, SetOptionRecordsWhatWasGivenAndAFlagTurnedOffIsNot) {
  sp::convert_options o;
  ASSERT_OK(sp::set_option(o, "shared", "keep"));
  ASSERT_OK(sp::set_option(o, "compress", "true"));
  EXPECT_TRUE(o.given.contains("shared")) << "given, though at its default value";
  EXPECT_TRUE(o.given.contains("compress"));
  ASSERT_OK(sp::set_option(o, "compress", "0"));
  EXPECT_FALSE(o.given.contains("compress"));
  EXPECT_FALSE(o.compress);
}

// The same misuse from each face: refused once, by the library, naming the option as typed.
TEST(PipelineOptions, MisusesNameTheOptionAsEachFaceSpellsIt) {
  const auto dir = st_test::scratch_dir();
  const std::string in = two_floats(dir / "in.safetensors").string();
  const std::string out = (dir / "out.safetensors").string();
  struct face {
    sp::option_names names;
    std::string shared, compress, max_ratio, budget;
  };
  auto cli = sp::option_names::flags();
  cli.rename("hash_long_names", "--rename-long");
  const std::vector<face> faces{
      {sp::option_names::keys(), "option 'shared'", "option 'compress'", "option 'max_ratio'",
       "option 'max_output_size'"},
      {sp::option_names::keywords(), "shared=", "compress=", "max_ratio=", "max_output_size="},
      {cli, "--shared", "--compress", "--max-ratio", "--max-output-size"},
  };
  for (const auto& f : faces) {
    SCOPED_TRACE(f.shared);
    // Given at its default value, for an input it does not apply to: refused all the same.
    EXPECT_ERROR_SAYING(sp::convert(in, out, set_one(f.names, "shared", "keep")), st::error_code::invalid_argument,
                        f.shared + " applies to PyTorch input only (the input is SafeTensors)");
    EXPECT_ERROR_SAYING(sp::convert(in, out, set_one(f.names, "max_ratio", "200")), st::error_code::invalid_argument,
                        f.max_ratio + " applies to .npz input only (the input is SafeTensors)");
    EXPECT_ERROR_SAYING(sp::convert(in, out, set_one(f.names, "compress", "1")), st::error_code::invalid_argument,
                        f.compress + " applies to .npz output only (the output is SafeTensors)");
    EXPECT_ERROR_SAYING(sp::convert(in, (dir / "o.npz").string(), set_one(f.names, "hash_long_names", "1")),
                        st::error_code::invalid_argument,
                        f.names("hash_long_names") + " applies to GGUF output only (the output is NumPy .npz)");
    EXPECT_FALSE(fs::exists(out));
    EXPECT_FALSE(fs::exists(dir / "o.npz"));
    sp::convert_options o;
    o.names = f.names;
    EXPECT_ERROR_SAYING(sp::set_option(o, "max_output_size", "0"), st::error_code::invalid_argument,
                        f.budget + ": invalid size '0': must be at least one byte");
    ASSERT_OK(sp::set_option(o, "max_output_size", "4"));  // the input holds 8 bytes
    EXPECT_ERROR_SAYING(sp::convert(in, out, o), st::error_code::limit_exceeded,
                        "(as " + f.budget + " sets it): refusing");
    EXPECT_ERROR_SAYING(sp::convert(in, out, o), st::error_code::limit_exceeded,
                        "raise the budget with " + f.budget + " if");
  }
  // Options that are off, or that apply, are accepted.
  EXPECT_OK(sp::convert(in, out, set_one(sp::option_names::keys(), "compress", "false")));
  EXPECT_OK(sp::convert(st_test::numpy_fixture("stored.npz").string(), (dir / "n.safetensors").string(),
                        set_one(sp::option_names::flags(), "max_ratio", "10")));
}

// Without a record of what was given (options set as fields), a value other than the default
// is what counts, as before.
TEST(PipelineOptions, FieldsSetDirectlyAreCheckedByTheirValue) {
  const auto dir = st_test::scratch_dir();
  const std::string in = two_floats(dir / "in.safetensors").string();
  sp::convert_options o;
  o.read.npz.max_expanded_bytes = 1 << 20;
  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "o.safetensors").string(), o), st::error_code::invalid_argument,
                      "option 'max_expanded_size' applies to .npz input only (the input is SafeTensors)");
  o = {};
  o.saturate = true;
  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "o.safetensors").string(), o), st::error_code::invalid_argument,
                      "option 'saturate' needs a dtype to cast to (option 'dtype')");
}

// A one-file output (the CLI's cast, extract and merge) refuses a directory there, in the
// library's own output check; otherwise a directory output is a sharded checkpoint.
TEST(PipelineOptions, OneFileOutputRefusesADirectory) {
  const auto dir = st_test::scratch_dir();
  const std::string in = two_floats(dir / "in.safetensors").string();
  fs::create_directories(dir / "existing");
  sp::convert_options one_file;
  one_file.to = "safetensors";
  one_file.one_file_output = true;
  EXPECT_ERROR_SAYING(sp::convert(in, (dir / "existing").string(), one_file), st::error_code::io,
                      "cannot write the output: Is a directory");
  EXPECT_TRUE(fs::is_empty(dir / "existing"));
  sp::convert_options sharded;
  sharded.to = "safetensors";
  auto done = sp::convert(in, (dir / "existing").string(), sharded);
  ASSERT_OK(done);
  EXPECT_EQ(done->output->id, "sharded");
}

}  // namespace
