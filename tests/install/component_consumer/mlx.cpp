// A program that only sees the installed mlx component: quantizes a row with MLX's affine
// 4-bit mode (on the component's worker threads) and dequantizes it back.
#include <safetensors/mlx_quant.h>

#include <array>
#include <cmath>
#include <cstdio>
#include <span>
#include <string>

int main() {
  namespace mlx = safetensors::mlx;
  std::array<float, 64> in{};
  for (std::size_t i = 0; i < in.size(); ++i) in[i] = static_cast<float>(i) / 8.0F - 4.0F;
  const mlx::quant_params p = mlx::default_params(mlx::quant_mode::affine);  // 4 bits, groups of 64
  std::array<std::byte, 64 * 4 / 8> weight{};
  std::array<float, 1> scales{};
  std::array<float, 1> biases{};
  const mlx::quantized_out out{weight, std::as_writable_bytes(std::span(scales)),
                               std::as_writable_bytes(std::span(biases))};
  if (auto s = mlx::quantize(safetensors::dtype::F32, std::as_bytes(std::span(in)), 1, in.size(), p, out); !s) {
    std::fprintf(stderr, "quantize: %s\n", s.err().to_string().c_str());
    return 1;
  }
  mlx::quantized_ref q;
  q.params = p;
  q.rows = 1;
  q.cols = in.size();
  q.weight = weight;
  q.scale_type = safetensors::dtype::F32;
  q.scales = std::as_bytes(std::span(scales));
  q.biases = std::as_bytes(std::span(biases));
  std::array<float, 64> back{};
  if (auto s = mlx::dequantize(q, safetensors::dtype::F32, std::as_writable_bytes(std::span(back))); !s) {
    std::fprintf(stderr, "dequantize: %s\n", s.err().to_string().c_str());
    return 1;
  }
  for (std::size_t i = 0; i < in.size(); ++i) {
    if (std::fabs(back[i] - in[i]) > scales[0]) {  // within one quantization step
      std::fprintf(stderr, "value %zu: %g became %g\n", i, static_cast<double>(in[i]), static_cast<double>(back[i]));
      return 1;
    }
  }
  std::printf("mlx ok (%s)\n", std::string(mlx::mode_name(p.mode)).c_str());
  return 0;
}
