// SPDX-License-Identifier: Apache-2.0
// The slice spec parser and planner. Input: a rank byte, one byte per dimension, a dtype
// byte, then the spec text. Properties: a plan's ranges are non-empty, lie inside the
// tensor, add up to byte_size, which is the size of the output shape; read_slice copies
// exactly those ranges.
#include <string_view>

#include "fuzz_support.h"
#include "safetensors/slice.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  if (size < 2) return 0;
  const std::size_t rank = data[0] % 5;
  if (size < 2 + rank) return 0;
  std::vector<std::uint64_t> shape(data + 1, data + 1 + rank);
  for (auto& d : shape) d %= 9;
  const dtype type = all_dtypes()[data[1 + rank] % all_dtypes().size()];
  const std::string_view text(reinterpret_cast<const char*>(data + 2 + rank), size - 2 - rank);
  auto spec = parse_slice_spec(text);
  const auto bytes = byte_size(type, shape);
  if (!spec || bytes.problem != size_problem::none) return 0;
  std::vector<std::byte> content(bytes.bytes);
  for (std::size_t i = 0; i < content.size(); ++i) content[i] = static_cast<std::byte>(i * 7 + 1);
  tensor_data t{"t", type, shape, content};
  auto file_bytes = serialize(std::span(&t, 1));
  ST_FUZZ_CHECK(file_bytes.ok());
  auto f = file::from_buffer(*file_bytes);
  ST_FUZZ_CHECK(f.ok());
  auto plan = plan_slice(*f, "t", *spec);
  if (!plan) return 0;
  const auto& info = *f->find("t");
  const std::uint64_t lo = f->header().data_start() + info.begin;
  const std::uint64_t hi = f->header().data_start() + info.end;
  std::vector<std::byte> expected;
  for (const byte_range& r : plan->ranges) {
    ST_FUZZ_CHECK(r.length > 0 && r.offset >= lo && r.offset <= hi && r.length <= hi - r.offset);
    expected.insert(expected.end(), file_bytes->begin() + static_cast<std::ptrdiff_t>(r.offset),
                    file_bytes->begin() + static_cast<std::ptrdiff_t>(r.offset + r.length));
  }
  ST_FUZZ_CHECK(expected.size() == plan->byte_size && byte_size(type, plan->shape).bytes == plan->byte_size);
  std::vector<std::byte> out(plan->byte_size);
  ST_FUZZ_CHECK(read_slice(*f, *plan, out).ok() && out == expected);
  return 0;
}
