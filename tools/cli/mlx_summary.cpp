// SPDX-License-Identifier: Apache-2.0
// `inspect`'s table of MLX quantized layers.
#include "mlx_summary.h"

#include <algorithm>

#include <fmt/format.h>

#include "report.h"
#include "safetensors/mlx_checkpoint.h"

namespace st_cli {

void print_mlx_summary(const std::string& path, const safetensors::header& h) {
  namespace mlx = safetensors::mlx;
  auto config = mlx::read_config_beside(path);
  if (!config) {
    fmt::print("\nmlx: {}\n", printable_text(config.err().to_string()));
    return;
  }
  auto info = mlx::describe_checkpoint(h, *config ? &**config : nullptr);
  if (!info) {
    fmt::print("\nmlx: {}\n", printable_text(info.err().to_string()));
    return;
  }
  if (info->layers.empty()) return;
  std::uint64_t weights = 0;
  double bits = 0;
  std::size_t width = 5;
  for (const auto& l : info->layers) {
    std::uint64_t n = l.rows * l.cols;
    weights += n;
    bits += static_cast<double>(n) * mlx::bits_per_weight(l.params, l.scale_type);
    width = std::min<std::size_t>(std::max(width, printable_text(l.path).size()), 80);
  }
  fmt::print("\nmlx quantized layers: {} ({} weights, {:.2f} bits per weight on average)\n", info->layers.size(),
             weights, weights == 0 ? 0.0 : bits / static_cast<double>(weights));
  fmt::print("{:<{}}  {:<6}  {:>4}  {:>5}  {:<6}  {:>11}  {:<20}  {}\n", "layer", width, "mode", "bits", "group",
             "scales", "bits/weight", "shape", "from");
  for (const auto& l : info->layers) {
    fmt::print("{:<{}}  {:<6}  {:>4}  {:>5}  {:<6}  {:>11.2f}  {:<20}  {}{}\n", printable_text(l.path), width,
               mlx::mode_name(l.params.mode), l.params.bits, l.params.group_size, safetensors::dtype_name(l.scale_type),
               mlx::bits_per_weight(l.params, l.scale_type), fmt::format("[{}]", fmt::join(l.shape, ", ")),
               mlx::source_name(l.source), l.ambiguous ? " (ambiguous)" : "");
  }
  for (const auto& w : info->warnings) print_warning(fmt::format("{}: {}", path, w));
}

param_overrides logical_param_overrides(const std::string& path, const safetensors::header& h) {
  namespace mlx = safetensors::mlx;
  param_overrides out;
  bool quantized = false;
  for (const auto& t : h.tensors()) quantized = quantized || t.type == safetensors::dtype::U32;
  if (!quantized) return out;  // no packed weights: skip reading config.json
  auto config = mlx::read_config_beside(path);
  if (!config) return out;
  auto info = mlx::describe_checkpoint(h, *config ? &**config : nullptr);
  if (!info) return out;
  for (const auto& l : info->layers) {
    out[l.weight] = l.rows * l.cols;
    out[l.scales] = 0;
    if (!l.biases.empty()) out[l.biases] = 0;
  }
  return out;
}

std::uint64_t param_count(const param_overrides& overrides, const safetensors::tensor_info& t) {
  const auto it = overrides.find(t.name);
  return it != overrides.end() ? it->second : t.element_count();
}

}  // namespace st_cli
