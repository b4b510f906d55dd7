// SPDX-License-Identifier: Apache-2.0
// The PyTorch checkpoint reader end to end (zip or legacy container, pickle, storages):
// the input is written to a scratch file and opened as a checkpoint. Properties: no
// crash, hang or unbounded allocation; every tensor of an accepted checkpoint reads back
// exactly its shape x dtype bytes.
#include <unistd.h>

#include <cstdio>
#include <string>

#include "fuzz_support.h"
#include "safetensors/formats/pytorch.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  static const std::string path = "/tmp/st-fuzz-torch-" + std::to_string(getpid()) + ".pt";
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (f == nullptr) return 0;
  // fwrite's buffer must not be null, and an empty input arrives as (nullptr, 0).
  const bool written = size == 0 || std::fwrite(data, 1, size, f) == size;
  std::fclose(f);
  if (!written) return 0;
  torch::open_options options;
  options.limits.max_stack = 4096;
  options.limits.max_memo = 4096;
  options.limits.max_values = 1 << 16;
  auto ckpt = torch::checkpoint::open(path, options);
  if (!ckpt) {
    ST_FUZZ_CHECK(ckpt.err().path == path);
    return 0;
  }
  for (std::size_t i = 0; i < ckpt->tensors().size(); ++i) {
    const auto& t = ckpt->tensors()[i];
    auto expected = byte_size(t.type, t.shape);
    ST_FUZZ_CHECK(expected.problem == size_problem::none);
    if (expected.bytes > (std::uint64_t{1} << 26)) continue;  // views of one storage can repeat it: stay fast
    std::uint64_t seen = 0;
    auto ok = ckpt->read_tensor(
        i,
        [&](std::span<const std::byte> chunk) -> status {
          seen += chunk.size();
          return {};
        },
        4096);
    ST_FUZZ_CHECK(!ok || seen == expected.bytes);
  }
  return 0;
}
