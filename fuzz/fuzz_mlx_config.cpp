// SPDX-License-Identifier: Apache-2.0
// MLX config.json quantization settings. Property: the global setting and every layer
// override carry bits and group size in the parser's documented range 1..4096 (the
// dequantizer checks them against the mode later).
#include <string_view>

#include "fuzz_support.h"
#include "safetensors/mlx_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors::mlx;
  auto config = parse_config_json(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!config || !*config) return 0;
  auto valid = [](const quant_params& p) {
    return p.bits >= 1 && p.bits <= 4096 && p.group_size >= 1 && p.group_size <= 4096;
  };
  if ((*config)->global) ST_FUZZ_CHECK(valid(*(*config)->global));
  for (const auto& [layer, params] : (*config)->layers) {
    if (params) ST_FUZZ_CHECK(valid(*params));
  }
  return 0;
}
