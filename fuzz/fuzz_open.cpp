// SPDX-License-Identifier: Apache-2.0
// Full open from memory, viewing and copying every tensor. Properties: the memory, mmap
// and pread paths and read_header give the same verdict, and the same bytes for every tensor.
#include "fuzz_support.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  const auto bytes = st_fuzz::as_bytes(data, size);
  auto memory = file::from_buffer(bytes);
  const std::string& path = st_fuzz::scratch_path("open");
  st_fuzz::write_whole(path, bytes);
  ST_FUZZ_CHECK(st_fuzz::verdict(read_header(path)) == st_fuzz::verdict(memory));
  for (auto backend : {io_backend::mmap, io_backend::pread}) {
    auto disk = file::open(path, {backend, {}});
    ST_FUZZ_CHECK(st_fuzz::verdict(disk) == st_fuzz::verdict(memory));
    if (!memory) continue;
    ST_FUZZ_CHECK(st_fuzz::same_header(disk->header(), memory->header()));
    for (const tensor_info& t : memory->tensors()) {
      auto copy = disk->load(t.name);
      ST_FUZZ_CHECK(copy.ok());
      auto view = memory->view(t.name);
      ST_FUZZ_CHECK(view.ok() && std::equal(view->data.begin(), view->data.end(), copy->begin(), copy->end()));
    }
  }
  return 0;
}
