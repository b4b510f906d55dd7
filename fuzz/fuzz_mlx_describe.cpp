// SPDX-License-Identifier: Apache-2.0
// mlx::describe_checkpoint over any header the lenient policy accepts. Properties: every
// layer it reports names tensors of the header with the dtypes and shapes the kernels
// rely on (U32 weight, scales of a float type), its rows x cols match the logical shape,
// its parameters pass dequantize's own check, and layers come sorted by weight name.
#include <algorithm>
#include <functional>
#include <numeric>

#include "fuzz_support.h"
#include "safetensors/mlx_checkpoint.h"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  using namespace safetensors;
  auto h = parse_file_bytes(st_fuzz::as_bytes(data, size), parse_options{validation_policy::lenient, std::nullopt});
  if (!h) return 0;
  auto info = mlx::describe_checkpoint(*h);
  if (!info) return 0;
  for (const auto& layer : info->layers) {
    const auto* weight = h->find(layer.weight);
    const auto* scales = h->find(layer.scales);
    ST_FUZZ_CHECK(weight && scales && weight->type == dtype::U32);
    ST_FUZZ_CHECK(layer.biases.empty() || h->find(layer.biases));
    ST_FUZZ_CHECK(!layer.shape.empty() && layer.shape.back() == layer.cols);
    const auto rows =
        std::accumulate(layer.shape.begin(), layer.shape.end() - 1, std::uint64_t{1}, std::multiplies<>());
    ST_FUZZ_CHECK(rows == layer.rows);
    ST_FUZZ_CHECK(mlx::check_dequantize_params(layer.params).ok());
  }
  ST_FUZZ_CHECK(std::is_sorted(info->layers.begin(), info->layers.end(),
                               [](const auto& a, const auto& b) { return a.weight < b.weight; }));
  return 0;
}
