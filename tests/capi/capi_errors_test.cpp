// SPDX-License-Identifier: Apache-2.0
// The C API's failures: statuses and the per-thread last error, bad arguments, options
// (policy, limits), write failures that leave the target alone, and allocation failures
// that come back as SAFETENSORS_ERR_OUT_OF_MEMORY instead of an exception.
#include <gtest/gtest.h>

#include <cerrno>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "capi/failing_new.h"
#include "safetensors/safetensors_c.h"
#include "support/paths.h"

namespace {

std::string last_message() { return safetensors_last_error_message(); }

/// A two-tensor file made through the C writer, in memory.
std::vector<std::byte> two_tensor_file(const char* metadata_value = "v") {
  static const std::uint8_t data[4] = {1, 2, 3, 4};
  const std::uint64_t shape[] = {2};
  safetensors_writer* w = nullptr;
  EXPECT_EQ(safetensors_writer_new(&w), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_add_tensor(w, "a", SAFETENSORS_DTYPE_U8, shape, 1, data, 2), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_add_tensor(w, "b", SAFETENSORS_DTYPE_U8, shape, 1, data + 2, 2), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_set_metadata(w, "k", metadata_value), SAFETENSORS_OK);
  std::uint64_t size = 0;
  EXPECT_EQ(safetensors_writer_file_size(w, &size), SAFETENSORS_OK);
  std::vector<std::byte> bytes(size);
  EXPECT_EQ(safetensors_writer_serialize(w, bytes.data(), bytes.size()), SAFETENSORS_OK);
  safetensors_writer_free(w);
  return bytes;
}

TEST(CApiErrors, TheLastErrorCarriesCodeMessageOffsetAndPath) {
  safetensors_clear_error();
  EXPECT_EQ(safetensors_last_error_code(), SAFETENSORS_OK);
  const auto dir = st_test::scratch_dir();
  const auto missing = (dir / "missing.safetensors").string();
  safetensors_file* f = reinterpret_cast<safetensors_file*>(&f);  // must be reset to NULL
  ASSERT_EQ(safetensors_open(missing.c_str(), nullptr, &f), SAFETENSORS_ERR_IO);
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(safetensors_last_error_code(), SAFETENSORS_ERR_IO);
  EXPECT_STREQ(safetensors_last_error_path(), missing.c_str());
  EXPECT_EQ(safetensors_last_error_os_errno(), ENOENT);
  EXPECT_NE(std::string(safetensors_last_error_text()).find(missing), std::string::npos);

  // Overlapping offsets: InvalidOffset at a byte offset, naming the tensor.
  auto bytes = two_tensor_file();
  const std::string json(reinterpret_cast<const char*>(bytes.data()) + 8, bytes.size() - 12);
  const std::size_t at = json.find("[2,4]");
  ASSERT_NE(at, std::string::npos) << json;
  bytes[8 + at + 1] = std::byte{'1'};
  ASSERT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), nullptr, &f), SAFETENSORS_ERR_INVALID_OFFSET);
  std::uint64_t offset = 0;
  EXPECT_EQ(safetensors_last_error_offset(&offset), 1);
  EXPECT_GT(offset, 8U);
  ASSERT_NE(safetensors_last_error_tensor(), nullptr);
  EXPECT_STREQ(safetensors_last_error_tensor(), "b");
  EXPECT_STREQ(safetensors_last_error_path(), "");

  // A success leaves the last error as it was.
  safetensors_options* o = nullptr;
  ASSERT_EQ(safetensors_options_new(&o), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_last_error_code(), SAFETENSORS_ERR_INVALID_OFFSET);
  safetensors_options_free(o);
}

TEST(CApiErrors, TheLastErrorIsPerThread) {
  safetensors_file* f = nullptr;
  ASSERT_EQ(safetensors_open_buffer("short", 5, nullptr, &f), SAFETENSORS_ERR_HEADER_TOO_SMALL);
  int other_thread_code = -1;
  std::thread([&] {
    other_thread_code = safetensors_last_error_code();
    EXPECT_EQ(safetensors_open_url("http://example.invalid/x", nullptr, &f), SAFETENSORS_ERR_UNSUPPORTED);
  }).join();
  EXPECT_EQ(other_thread_code, SAFETENSORS_OK);
  EXPECT_EQ(safetensors_last_error_code(), SAFETENSORS_ERR_HEADER_TOO_SMALL);
}

TEST(CApiErrors, BadArgumentsAreInvalidArgumentNamingTheFunction) {
  const auto bytes = two_tensor_file();
  safetensors_file* f = nullptr;
  ASSERT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), nullptr, &f), SAFETENSORS_OK);
  std::size_t count = 0;
  EXPECT_EQ(safetensors_tensor_count(nullptr, &count), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last_message(), "safetensors_tensor_count: file is NULL");
  safetensors_file* unopened = f;  // a failed open sets its output to NULL
  EXPECT_EQ(safetensors_open(nullptr, nullptr, &unopened), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(unopened, nullptr);
  const char* name = nullptr;
  EXPECT_EQ(safetensors_tensor_name(f, 2, &name, nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last_message(), "safetensors_tensor_name: tensor index 2 out of range (2 tensors)");
  std::uint8_t out[3];
  EXPECT_EQ(safetensors_tensor_read(f, 0, out, 3), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(last_message(), "safetensors_tensor_read: the tensor needs exactly 2 but 3 were given");
  std::size_t index = 0;
  EXPECT_EQ(safetensors_tensor_find(f, "zz", &index), SAFETENSORS_ERR_TENSOR_NOT_FOUND);
  EXPECT_STREQ(safetensors_last_error_tensor(), "zz");
  safetensors_slice* slice = nullptr;
  EXPECT_EQ(safetensors_slice_new(f, 0, "5", &slice), SAFETENSORS_ERR_INVALID_SLICE);
  EXPECT_EQ(slice, nullptr);
  EXPECT_EQ(safetensors_slice_new(f, 0, "0:1:0", &slice), SAFETENSORS_ERR_INVALID_SLICE);
  EXPECT_EQ(safetensors_slice_new(f, 0, "x", &slice), SAFETENSORS_ERR_INVALID_SLICE);
  EXPECT_EQ(safetensors_metadata_at(f, 1, nullptr, nullptr, nullptr, nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_warning_at(f, 0, nullptr, nullptr, nullptr), SAFETENSORS_ERR_INVALID_ARGUMENT);
  safetensors_close(f);
  safetensors_close(nullptr);  // as free(NULL)
  safetensors_slice_free(nullptr);
  safetensors_writer_free(nullptr);
  safetensors_options_free(nullptr);

  safetensors_options* o = nullptr;
  ASSERT_EQ(safetensors_options_new(&o), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_options_set_backend(o, 7), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_options_set_policy(o, 3), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_options_set_limit(o, 5, 1), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_options_set_limit(o, -1, 1), SAFETENSORS_ERR_INVALID_ARGUMENT);
  safetensors_options_free(o);
}

TEST(CApiErrors, PolicyAndLimitsApply) {
  const auto bytes = two_tensor_file();
  safetensors_options* o = nullptr;
  ASSERT_EQ(safetensors_options_new(&o), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_options_set_limit(o, SAFETENSORS_LIMIT_MAX_TENSORS, 1), SAFETENSORS_OK);
  safetensors_file* f = nullptr;
  EXPECT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), o, &f), SAFETENSORS_ERR_LIMIT_EXCEEDED);
  ASSERT_EQ(safetensors_options_set_limit(o, SAFETENSORS_LIMIT_MAX_TENSORS, 2), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_options_set_limit(o, SAFETENSORS_LIMIT_MAX_HEADER_BYTES, 16), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), o, &f), SAFETENSORS_ERR_HEADER_TOO_LARGE);
  ASSERT_EQ(safetensors_options_set_limit(o, SAFETENSORS_LIMIT_MAX_HEADER_BYTES, 1000), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), o, &f), SAFETENSORS_OK);
  safetensors_close(f);

  // Trailing bytes: an error under the reference policy, a warning under lenient.
  auto longer = bytes;
  longer.push_back(std::byte{0});
  ASSERT_EQ(safetensors_options_set_policy(o, SAFETENSORS_POLICY_REFERENCE), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_open_buffer(longer.data(), longer.size(), o, &f), SAFETENSORS_ERR_METADATA_INCOMPLETE_BUFFER);
  ASSERT_EQ(safetensors_options_set_policy(o, SAFETENSORS_POLICY_LENIENT), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_open_buffer(longer.data(), longer.size(), o, &f), SAFETENSORS_OK);
  std::size_t warnings = 0;
  ASSERT_EQ(safetensors_warning_count(f, &warnings), SAFETENSORS_OK);
  ASSERT_EQ(warnings, 1U);
  const char* message = nullptr;
  int has_offset = 0;
  std::uint64_t offset = 0;
  ASSERT_EQ(safetensors_warning_at(f, 0, &message, &has_offset, &offset), SAFETENSORS_OK);
  EXPECT_NE(message, nullptr);
  safetensors_close(f);

  // Strict policy's default caps: a 2 MiB metadata value is over its 1 MiB.
  const std::string big(2 << 20, 'x');
  const auto large_metadata = two_tensor_file(big.c_str());
  ASSERT_EQ(safetensors_options_set_policy(o, SAFETENSORS_POLICY_STRICT), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_options_set_limit(o, SAFETENSORS_LIMIT_MAX_HEADER_BYTES, 25'000'000), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_open_buffer(large_metadata.data(), large_metadata.size(), o, &f),
            SAFETENSORS_ERR_LIMIT_EXCEEDED);
  ASSERT_EQ(safetensors_options_set_limit(o, SAFETENSORS_LIMIT_MAX_METADATA_BYTES, 4 << 20), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_open_buffer(large_metadata.data(), large_metadata.size(), o, &f), SAFETENSORS_OK);
  safetensors_close(f);
  safetensors_options_free(o);
}

TEST(CApiErrors, AFailedWriteLeavesTheTargetAlone) {
  const auto dir = st_test::scratch_dir();
  const auto target = (dir / "model.safetensors").string();
  const std::vector<std::byte> original = {std::byte{'o'}, std::byte{'l'}, std::byte{'d'}};
  st_test::write_bytes(target, original);
  const std::uint8_t data[4] = {};
  const std::uint64_t shape[] = {2};
  safetensors_writer* w = nullptr;
  ASSERT_EQ(safetensors_writer_new(&w), SAFETENSORS_OK);
  // Wrong byte counts are refused when added, naming the tensor.
  EXPECT_EQ(safetensors_writer_add_tensor(w, "x", SAFETENSORS_DTYPE_U16, shape, 1, data, 3),
            SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_STREQ(safetensors_last_error_tensor(), "x");
  EXPECT_EQ(safetensors_writer_add_tensor(w, "x", 99, shape, 1, data, 4), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_writer_set_alignment(w, 12), SAFETENSORS_ERR_INVALID_ARGUMENT);
  // A repeated name and `__metadata__` are refused when added, with the code a reader gives
  // the file they would make, naming the tensor.
  ASSERT_EQ(safetensors_writer_add_tensor(w, "x", SAFETENSORS_DTYPE_U8, shape, 1, data, 2), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_add_tensor(w, "x", SAFETENSORS_DTYPE_U8, shape, 1, data, 2),
            SAFETENSORS_ERR_DUPLICATE_KEY);
  EXPECT_STREQ(safetensors_last_error_tensor(), "x");
  EXPECT_EQ(last_message(), "safetensors_writer_add_tensor: duplicate tensor name 'x'");
  EXPECT_EQ(safetensors_writer_add_tensor(w, "__metadata__", SAFETENSORS_DTYPE_U8, shape, 1, data, 2),
            SAFETENSORS_ERR_INVALID_HEADER_DESERIALIZATION);
  EXPECT_STREQ(safetensors_last_error_tensor(), "__metadata__");
  // A name refused for its size can be added once right.
  EXPECT_EQ(safetensors_writer_add_tensor(w, "y", SAFETENSORS_DTYPE_U16, shape, 1, data, 2),
            SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(safetensors_writer_add_tensor(w, "y", SAFETENSORS_DTYPE_U16, shape, 1, data, 4), SAFETENSORS_OK);
  // A metadata key that is not UTF-8: found when the layout is planned; nothing is written.
  ASSERT_EQ(safetensors_writer_set_metadata(w, "\xff", "v"), SAFETENSORS_OK);
  EXPECT_EQ(safetensors_writer_write(w, target.c_str()), SAFETENSORS_ERR_INVALID_ARGUMENT);
  std::uint64_t size = 0;
  EXPECT_EQ(safetensors_writer_file_size(w, &size), SAFETENSORS_ERR_INVALID_ARGUMENT);
  EXPECT_EQ(st_test::read_bytes(target), original);
  safetensors_writer_free(w);

  // A directory that does not exist: IoError, and no temporary left anywhere.
  ASSERT_EQ(safetensors_writer_new(&w), SAFETENSORS_OK);
  ASSERT_EQ(safetensors_writer_add_tensor(w, "x", SAFETENSORS_DTYPE_U8, shape, 1, data, 2), SAFETENSORS_OK);
  const auto nowhere = (dir / "no" / "such" / "dir.safetensors").string();
  EXPECT_EQ(safetensors_writer_write(w, nowhere.c_str()), SAFETENSORS_ERR_IO);
  std::vector<std::byte> small(3);
  EXPECT_EQ(safetensors_writer_serialize(w, small.data(), small.size()), SAFETENSORS_ERR_INVALID_ARGUMENT);
  safetensors_writer_free(w);
  std::size_t entries = 0;
  for ([[maybe_unused]] const auto& e : std::filesystem::directory_iterator(dir)) ++entries;
  EXPECT_EQ(entries, 1U);
}

TEST(CApiErrors, AllocationFailuresBecomeOutOfMemory) {
  if (!st_test::failing_new::available()) GTEST_SKIP() << "sanitizer builds own operator new";
  const auto bytes = two_tensor_file();
  const auto path = (st_test::scratch_dir() / "m.safetensors").string();
  st_test::write_bytes(path, bytes);
  {
    st_test::failing_new fail_after(0);
    safetensors_options* o = nullptr;
    EXPECT_EQ(safetensors_options_new(&o), SAFETENSORS_ERR_OUT_OF_MEMORY);
    EXPECT_EQ(o, nullptr);
  }
  EXPECT_EQ(safetensors_last_error_code(), SAFETENSORS_ERR_OUT_OF_MEMORY);
  EXPECT_STREQ(safetensors_last_error_message(), "out of memory");
  // Fail the 1st, 2nd, ... allocation of an open and a read: each run ends in a status,
  // OUT_OF_MEMORY or success, never an exception or a crash, until one needs no failure.
  bool succeeded = false;
  int out_of_memory = 0;
  for (std::size_t n = 0; n < 1000 && !succeeded; ++n) {
    safetensors_file* f = nullptr;
    std::uint8_t out[2] = {};
    int status = SAFETENSORS_OK;
    {
      st_test::failing_new fail_after(n);
      status = safetensors_open(path.c_str(), nullptr, &f);
      if (status == SAFETENSORS_OK) status = safetensors_tensor_read(f, 1, out, 2);
      if (status == SAFETENSORS_OK) {
        safetensors_slice* s = nullptr;
        status = safetensors_slice_new(f, 0, "1:", &s);
        safetensors_slice_free(s);
      }
      succeeded = fail_after.exhausted() == false;
    }
    safetensors_close(f);
    ASSERT_TRUE(status == SAFETENSORS_OK || status == SAFETENSORS_ERR_OUT_OF_MEMORY)
        << "allocation " << n << ": " << safetensors_status_name(status) << " " << safetensors_last_error_message();
    if (status == SAFETENSORS_ERR_OUT_OF_MEMORY) ++out_of_memory;
    if (succeeded) {
      EXPECT_EQ(status, SAFETENSORS_OK);
      EXPECT_EQ(out[0], 3);
    }
  }
  EXPECT_TRUE(succeeded);
  EXPECT_GT(out_of_memory, 3);
}

}  // namespace

namespace {

/// A file whose header is `json` followed by `data_bytes` zero bytes.
std::vector<std::byte> file_with_header(const std::string& json, std::size_t data_bytes) {
  std::vector<std::byte> bytes(8 + json.size() + data_bytes);
  for (std::size_t i = 0; i < 8; ++i) bytes[i] = static_cast<std::byte>((json.size() >> (8 * i)) & 0xff);
  std::memcpy(bytes.data() + 8, json.data(), json.size());
  return bytes;
}

// The CLI's words for a file of another format, through the C API's open functions too.
TEST(CApiErrors, AFileOfAnotherFormatIsNamed) {
  // A GGUF file's first bytes: its magic and version read as a length prefix of 14 GB.
  std::vector<std::byte> gguf(64);
  const char magic[] = {'G', 'G', 'U', 'F', 3, 0, 0, 0};
  std::memcpy(gguf.data(), magic, sizeof magic);
  const auto path = (st_test::scratch_dir() / "model.gguf").string();
  st_test::write_bytes(path, gguf);
  safetensors_file* f = nullptr;
  EXPECT_EQ(safetensors_open(path.c_str(), nullptr, &f), SAFETENSORS_ERR_HEADER_TOO_LARGE);
  EXPECT_EQ(last_message(), "this is a GGUF file, not SafeTensors");
  EXPECT_EQ(std::string(safetensors_last_error_text()), path + ": this is a GGUF file, not SafeTensors");
  EXPECT_EQ(safetensors_open_buffer(gguf.data(), gguf.size(), nullptr, &f), SAFETENSORS_ERR_HEADER_TOO_LARGE);
  EXPECT_EQ(last_message(), "this is a GGUF file, not SafeTensors");
  EXPECT_EQ(f, nullptr);
}

TEST(CApiErrors, LengthsKeepWhatFollowsANulInATensorName) {
  // The second tensor, named "mlp\0o_proj", overlaps the first: InvalidOffset names it.
  const auto bytes = file_with_header(R"({"a":{"dtype":"U8","shape":[2],"data_offsets":[0,2]},)"
                                      R"("mlp\u0000o_proj":{"dtype":"U8","shape":[2],"data_offsets":[1,3]}})",
                                      3);
  safetensors_file* f = nullptr;
  ASSERT_EQ(safetensors_open_buffer(bytes.data(), bytes.size(), nullptr, &f), SAFETENSORS_ERR_INVALID_OFFSET);
  const std::string name("mlp\0o_proj", 10);
  ASSERT_NE(safetensors_last_error_tensor(), nullptr);
  EXPECT_EQ(std::string(safetensors_last_error_tensor(), safetensors_last_error_tensor_length()), name);
  const std::string message(safetensors_last_error_message(), safetensors_last_error_message_length());
  EXPECT_EQ(message, "invalid offset for tensor '" + name + "': data_offsets [1, 3], expected begin 2");
  const std::string text(safetensors_last_error_text(), safetensors_last_error_text_length());
  EXPECT_NE(text.find(name), std::string::npos) << "the report names the whole tensor";

  safetensors_clear_error();
  EXPECT_EQ(safetensors_last_error_tensor_length(), 0U);
  EXPECT_EQ(safetensors_last_error_message_length(), 0U);
  EXPECT_EQ(safetensors_last_error_text_length(), 0U);
}

}  // namespace

// safetensors_open_url goes through the library's location door (location.h): a file:// URL is
// its local file, a scheme no provider serves is UNSUPPORTED naming it, and a path is no URL.
TEST(CApiErrors, OpenUrlReadsFileUrlsAndNamesWhatItCannotRead) {
  const auto path = st_test::scratch_dir() / "two tensors.safetensors";
  st_test::write_bytes(path, two_tensor_file());
  safetensors_file* f = nullptr;
  const std::string url = "file://" + path.parent_path().string() + "/two%20tensors.safetensors";
  ASSERT_EQ(safetensors_open_url(url.c_str(), nullptr, &f), SAFETENSORS_OK) << last_message();
  std::size_t count = 0;
  EXPECT_EQ(safetensors_tensor_count(f, &count), SAFETENSORS_OK);
  EXPECT_EQ(count, 2u);
  safetensors_close(f);
  f = nullptr;
  EXPECT_EQ(safetensors_open_url("https://example.invalid/x.safetensors", nullptr, &f), SAFETENSORS_ERR_UNSUPPORTED);
  EXPECT_NE(last_message().find("reads no https:// URLs"), std::string::npos) << last_message();
  EXPECT_EQ(f, nullptr);
  EXPECT_EQ(safetensors_open_url(path.c_str(), nullptr, &f), SAFETENSORS_ERR_INVALID_ARGUMENT);
}
