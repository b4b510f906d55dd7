// SPDX-License-Identifier: Apache-2.0
#include "remote/remote_fixtures.h"

#include <fstream>

#include "safetensors/writer.h"
#include "support/status_matchers.h"

namespace st_test {

std::vector<std::byte> u8_bytes(std::size_t index, std::size_t size) {
  std::vector<std::byte> out(size);
  for (std::size_t i = 0; i < size; ++i) out[i] = pattern_byte(i, static_cast<unsigned>(index));
  return out;
}

void write_u8_file(const std::filesystem::path& path, const std::vector<std::pair<std::string, std::size_t>>& tensors) {
  std::filesystem::create_directories(path.parent_path());
  std::vector<std::vector<std::byte>> bytes;
  std::vector<safetensors::tensor_data> data;
  for (std::size_t i = 0; i < tensors.size(); ++i) bytes.push_back(u8_bytes(i, tensors[i].second));
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    data.push_back({tensors[i].first, safetensors::dtype::U8, {tensors[i].second}, bytes[i]});
  }
  ASSERT_OK(safetensors::write_file(path.string(), data));
}

void write_sparse_file(const std::filesystem::path& path, std::uint64_t data_bytes) {
  std::string json = R"({"w":{"dtype":"U8","shape":[)" + std::to_string(data_bytes) + R"(],"data_offsets":[0,)" +
                     std::to_string(data_bytes) + "]}}";
  while (json.size() % 8 != 0) json += ' ';
  std::string prefix(8, '\0');
  for (std::size_t i = 0; i < 8; ++i) prefix[i] = static_cast<char>((json.size() >> (8 * i)) & 0xff);
  {
    std::ofstream out(path, std::ios::binary);
    out << prefix << json;
  }
  std::filesystem::resize_file(path, 8 + json.size() + data_bytes);
}

}  // namespace st_test
