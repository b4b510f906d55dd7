// SPDX-License-Identifier: Apache-2.0
// safetensors_description_tensor_data: where a described tensor's bytes lie in its file when
// they are plain (what the browser inspector reads to show values). Each range is checked
// against the tensor as the format's reader gives it (converted to SafeTensors); quantized
// GGUF tensors, deflated .npz members and strided views say why they are not plain.
#include <gtest/gtest.h>

#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/safetensors_c.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;

std::string data_fixture(const std::string& name) {
  return (fs::path(SAFETENSORS_SOURCE_DIR) / "tests/fixtures" / name).string();
}

std::vector<std::byte> file_bytes(const std::string& path, std::uint64_t offset, std::uint64_t length) {
  std::ifstream in(path, std::ios::binary);
  in.seekg(static_cast<std::streamoff>(offset));
  std::vector<std::byte> out(length);
  in.read(reinterpret_cast<char*>(out.data()), static_cast<std::streamsize>(length));
  EXPECT_EQ(static_cast<std::uint64_t>(in.gcount()), length) << path;
  return out;
}

struct described {
  safetensors_description* d = nullptr;
  int status = SAFETENSORS_OK;
  explicit described(const std::string& path) : status(safetensors_describe(path.c_str(), &d)) {}
  ~described() { safetensors_description_free(d); }
};

/// Checks every plain tensor of `name` against the converted file; returns how many were plain.
std::size_t check_plain_tensors(const std::string& name) {
  const std::string path = data_fixture(name);
  described h(path);
  EXPECT_EQ(h.status, SAFETENSORS_OK) << safetensors_last_error_message();
  if (h.status != SAFETENSORS_OK) return 0;
  const std::string out = (st_test::scratch_dir() / "converted.safetensors").string();
  const char* inputs[] = {path.c_str()};
  EXPECT_EQ(safetensors_convert(inputs, 1, out.c_str(), nullptr), SAFETENSORS_OK) << safetensors_last_error_message();
  auto converted = st::file::open(out);
  EXPECT_OK(converted);
  if (!converted) return 0;
  std::size_t plain = 0;
  for (std::size_t i = 0; i < safetensors_description_tensor_count(h.d); ++i) {
    const char* tensor = nullptr;
    EXPECT_EQ(safetensors_description_tensor(h.d, i, &tensor, nullptr, nullptr, nullptr, nullptr, nullptr, nullptr),
              SAFETENSORS_OK);
    std::uint64_t offset = 0;
    std::uint64_t length = 0;
    const char* dtype = nullptr;
    if (safetensors_description_tensor_data(h.d, i, &offset, &length, &dtype) != SAFETENSORS_OK) continue;
    ++plain;
    const auto* info = converted->find(tensor);
    EXPECT_NE(info, nullptr) << name << ": " << tensor;
    if (info == nullptr) continue;
    EXPECT_EQ(dtype, st::dtype_name(info->type)) << name << ": " << tensor;
    auto expected = converted->load(tensor);
    EXPECT_OK(expected);
    if (expected) {
      EXPECT_EQ(file_bytes(path, offset, length), *expected) << name << ": " << tensor;
    }
  }
  return plain;
}

/// The status and last error message of tensor `index`'s data.
std::string why_not_plain(const std::string& name, std::size_t index) {
  described h(data_fixture(name));
  EXPECT_EQ(h.status, SAFETENSORS_OK) << safetensors_last_error_message();
  if (h.status != SAFETENSORS_OK) return "";
  EXPECT_EQ(safetensors_description_tensor_data(h.d, index, nullptr, nullptr, nullptr), SAFETENSORS_ERR_UNSUPPORTED);
  return safetensors_last_error_message();
}

bool without_converters() {
  safetensors_description* d = nullptr;
  const int status = safetensors_describe(data_fixture("gguf/plain.gguf").c_str(), &d);
  safetensors_description_free(d);
  return status == SAFETENSORS_ERR_UNSUPPORTED;
}

}  // namespace

TEST(CApiTensorData, PlainTensorsAreTheBytesTheReadersGive) {
  if (without_converters()) GTEST_SKIP() << "built without the converters";
  EXPECT_GE(check_plain_tensors("gguf/plain.gguf"), 1u);
  EXPECT_EQ(check_plain_tensors("numpy/dtype_f4.npy"), 1u);
  EXPECT_EQ(check_plain_tensors("numpy/dtype_i2.npy"), 1u);
  EXPECT_GE(check_plain_tensors("numpy/stored.npz"), 1u);
  EXPECT_GE(check_plain_tensors("pytorch/basic.pt"), 1u);
}

TEST(CApiTensorData, SaysWhyBytesAreNotPlain) {
  if (without_converters()) GTEST_SKIP() << "built without the converters";
  EXPECT_EQ(check_plain_tensors("numpy/deflated.npz"), 0u);
  EXPECT_EQ(why_not_plain("numpy/deflated.npz", 0), "a deflated .npz member");
  EXPECT_EQ(why_not_plain("numpy/fortran_2d.npy", 0), "Fortran order");
  EXPECT_EQ(why_not_plain("numpy/big_endian_i4.npy", 0), "big-endian");
  EXPECT_EQ(why_not_plain("pytorch/legacy.pt", 0), "a legacy pickle");
  EXPECT_EQ(why_not_plain("pytorch/views.pt", 0), "a strided view");
  described q(data_fixture("gguf/quantized.gguf"));
  ASSERT_EQ(q.status, SAFETENSORS_OK) << safetensors_last_error_message();
  std::size_t quantized = 0;
  for (std::size_t i = 0; i < safetensors_description_tensor_count(q.d); ++i) {
    const char* type = nullptr;
    ASSERT_EQ(safetensors_description_tensor(q.d, i, nullptr, &type, nullptr, nullptr, nullptr, nullptr, nullptr),
              SAFETENSORS_OK);
    if (std::string(type).rfind('Q', 0) != 0) continue;
    ++quantized;
    EXPECT_EQ(safetensors_description_tensor_data(q.d, i, nullptr, nullptr, nullptr), SAFETENSORS_ERR_UNSUPPORTED);
    EXPECT_EQ(std::string(safetensors_last_error_message()), std::string("quantized type ") + type);
  }
  EXPECT_GE(quantized, 1u);
  described p(data_fixture("gguf/plain.gguf"));
  ASSERT_EQ(p.status, SAFETENSORS_OK);
  EXPECT_EQ(safetensors_description_tensor_data(p.d, 99, nullptr, nullptr, nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);
}
