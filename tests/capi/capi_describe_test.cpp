// SPDX-License-Identifier: Apache-2.0
// safetensors_describe: a GGUF, NumPy or PyTorch file as `safetensors inspect` shows it, from
// the library's format table; a pickle that tries to run code is described by its verdict and
// refused; a SafeTensors file is not described (it is opened).
#include <gtest/gtest.h>

#include <filesystem>
#include <string>
#include <vector>

#include "safetensors/safetensors_c.h"

namespace {

namespace fs = std::filesystem;

std::string fixture(const std::string& name) {
  return (fs::path(SAFETENSORS_SOURCE_DIR) / "tests/fixtures" / name).string();
}

struct description_handle {
  safetensors_description* d = nullptr;
  int status = SAFETENSORS_OK;
  explicit description_handle(const std::string& path) : status(safetensors_describe(path.c_str(), &d)) {}
  ~description_handle() { safetensors_description_free(d); }
};

}  // namespace

TEST(CApiDescribe, AGgufFileAsInspectShowsIt) {
  description_handle h(fixture("gguf/plain.gguf"));
  if (h.status == SAFETENSORS_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the converters";
  ASSERT_EQ(h.status, SAFETENSORS_OK) << safetensors_last_error_message();
  const char* id = nullptr;
  const char* format = nullptr;
  const char* extra_title = nullptr;
  ASSERT_EQ(safetensors_description_format(h.d, &id, &format, &extra_title), SAFETENSORS_OK);
  EXPECT_STREQ(id, "gguf");
  EXPECT_STREQ(format, "GGUF v3, alignment 32, data starts at byte 1408");
  EXPECT_STREQ(extra_title, "offset");
  ASSERT_EQ(safetensors_description_tensor_count(h.d), 8u);
  const char* name = nullptr;
  const char* dtype = nullptr;
  const uint64_t* dims = nullptr;
  size_t rank = 0;
  uint64_t bytes = 0;
  uint64_t elements = 0;
  const char* extra = nullptr;
  ASSERT_EQ(safetensors_description_tensor(h.d, 0, &name, &dtype, &dims, &rank, &bytes, &elements, &extra),
            SAFETENSORS_OK);
  EXPECT_STREQ(name, "blk.0.f32");
  EXPECT_STREQ(dtype, "F32");
  EXPECT_EQ(std::vector<uint64_t>(dims, dims + rank), (std::vector<uint64_t>{2, 3, 4}));
  EXPECT_EQ(bytes, 96u);
  EXPECT_EQ(elements, 24u);
  EXPECT_STREQ(extra, "1,408");
  EXPECT_EQ(safetensors_description_tensor(h.d, 8, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
            SAFETENSORS_ERR_INVALID_ARGUMENT);
  ASSERT_EQ(safetensors_description_metadata_count(h.d), 19u);
  const char* key = nullptr;
  const char* value = nullptr;
  ASSERT_EQ(safetensors_description_metadata(h.d, 0, &key, &value), SAFETENSORS_OK);
  EXPECT_STREQ(key, "general.architecture (STRING)");
  EXPECT_STREQ(value, "test");
  EXPECT_EQ(safetensors_description_note_count(h.d), 0u);
  const char* refusal = nullptr;
  EXPECT_EQ(safetensors_description_refusal(h.d, &refusal), SAFETENSORS_OK);
  EXPECT_STREQ(refusal, "");
}

TEST(CApiDescribe, APickleThatTriesToRunCodeIsDescribedByItsVerdictAndRefused) {
  const std::string path = fixture("pytorch/hostile/hand_popped_zip.pt");
  description_handle h(path);
  if (h.status == SAFETENSORS_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the converters";
  ASSERT_EQ(h.status, SAFETENSORS_OK) << safetensors_last_error_message();
  EXPECT_EQ(safetensors_description_tensor_count(h.d), 0u);
  ASSERT_EQ(safetensors_description_note_count(h.d), 2u);
  const char* note = nullptr;
  ASSERT_EQ(safetensors_description_note(h.d, 0, &note), SAFETENSORS_OK);
  EXPECT_STREQ(note, "pickle verdict: refused: this file tries to run code");
  const char* text = nullptr;
  EXPECT_EQ(safetensors_description_refusal(h.d, &text), SAFETENSORS_ERR_CODE_EXECUTION);
  EXPECT_EQ(std::string(text), path +
                                   ": refused: this file tries to run code: posix.system at byte 2 of "
                                   "archive/data.pkl (at byte 2)");
}

TEST(CApiDescribe, ANumpyFileAndWhatIsNotDescribed) {
  description_handle npy(fixture("numpy/dtype_f4.npy"));
  if (npy.status == SAFETENSORS_ERR_UNSUPPORTED) GTEST_SKIP() << "built without the converters";
  ASSERT_EQ(npy.status, SAFETENSORS_OK) << safetensors_last_error_message();
  const char* extra = nullptr;
  ASSERT_EQ(safetensors_description_tensor(npy.d, 0, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr, &extra),
            SAFETENSORS_OK);
  EXPECT_STREQ(extra, "<f4");

  const auto sample = (fs::path(SAFETENSORS_SOURCE_DIR) / "samples/tiny-llama-bf16.safetensors").string();
  description_handle opened_not_described(sample);
  EXPECT_EQ(opened_not_described.status, SAFETENSORS_ERR_UNSUPPORTED);
  EXPECT_STREQ(safetensors_last_error_message(), "SafeTensors files are read with safetensors_open, not described");
  description_handle missing(fixture("gguf/no-such-file.gguf"));
  EXPECT_EQ(missing.status, SAFETENSORS_ERR_IO);
  EXPECT_EQ(missing.d, nullptr);
  safetensors_description* none = nullptr;
  EXPECT_EQ(safetensors_describe(nullptr, &none), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_description_tensor_count(nullptr), 0u);
  EXPECT_EQ(safetensors_description_refusal(nullptr, nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);
}
