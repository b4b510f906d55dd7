// SPDX-License-Identifier: Apache-2.0
// MLX dequantization throughput in bytes of OUTPUT per second, beside a plain memcpy of
// the same output size in the same run; MLX quantization in bytes of INPUT per second beside
// a memcpy of the input size. Arg 0: kernel threads (kernel_options::threads: 1 and 2).
#include <benchmark/benchmark.h>

#include <cstring>
#include <memory>
#include <random>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/mlx_quant.h"

namespace {

namespace mlx = safetensors::mlx;
using safetensors::dtype;

constexpr std::uint64_t rows = 4096;
constexpr std::uint64_t cols = 4096;  // 16M weights: 32 MiB of BF16, 64 MiB of F32 output

struct layer {
  mlx::quant_params params;
  std::vector<std::byte> weight, scales, biases;
  mlx::quantized_ref ref() const {
    return {params, rows,   cols,        weight, params.mode == mlx::quant_mode::affine ? dtype::BF16 : dtype::U8,
            scales, biases, std::nullopt};
  }
};

/// Quantizes random BF16 weights once per parameter set.
const layer& make_layer(const mlx::quant_params& p) {
  static std::vector<std::unique_ptr<layer>> cache;
  for (const auto& l : cache) {
    if (l->params == p) return *l;
  }
  std::vector<std::uint16_t> in(rows * cols);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0F, 0.02F);
  for (auto& x : in) x = safetensors::f32_to_bf16(normal(rng));
  auto l = std::make_unique<layer>();
  l->params = p;
  const bool affine = p.mode == mlx::quant_mode::affine;
  const std::uint64_t groups = rows * cols / p.group_size;
  l->weight.resize(rows * cols * p.bits / 8);
  l->scales.resize(groups * (affine ? 2 : 1));
  l->biases.resize(affine ? groups * 2 : 0);
  if (!mlx::quantize(dtype::BF16, std::as_bytes(std::span(in)), rows, cols, p, {l->weight, l->scales, l->biases})) {
    std::abort();
  }
  cache.push_back(std::move(l));
  return *cache.back();
}

void run_dequantize(benchmark::State& state, mlx::quant_params p, dtype out_type) {
  const layer& l = make_layer(p);
  const auto ref = l.ref();
  std::vector<std::byte> out(rows * cols * (safetensors::dtype_bits(out_type) / 8));
  const mlx::kernel_options options{static_cast<unsigned>(state.range(0))};
  for (auto _ : state) {
    if (!mlx::dequantize(ref, out_type, out, options)) state.SkipWithError("dequantize failed");
    benchmark::DoNotOptimize(out.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(out.size()));
}

/// memcpy at its best: both ends 64-byte congruent, the destination 64 bytes further into its
/// page than the source (no 4 KiB aliasing between two blocks of malloc's mmap; see
/// convert_bench.cpp).
void run_memcpy(benchmark::State& state, std::size_t bytes) {
  std::vector<std::byte> src(bytes, std::byte{1}), dst_storage(bytes + 64);
  std::byte* dst = dst_storage.data() + 64;
  for (auto _ : state) {
    std::memcpy(dst, src.data(), bytes);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(bytes));
}

constexpr mlx::quant_params affine4{mlx::quant_mode::affine, 4, 64};
constexpr mlx::quant_params affine8{mlx::quant_mode::affine, 8, 64};
constexpr mlx::quant_params mxfp4{mlx::quant_mode::mxfp4, 4, 32};
constexpr mlx::quant_params mxfp8{mlx::quant_mode::mxfp8, 8, 32};
constexpr mlx::quant_params nvfp4{mlx::quant_mode::nvfp4, 4, 16};
constexpr mlx::quant_params affine2{mlx::quant_mode::affine, 2, 64};
constexpr mlx::quant_params affine3{mlx::quant_mode::affine, 3, 64};
constexpr mlx::quant_params affine6{mlx::quant_mode::affine, 6, 64};

/// Quantizes the same random BF16 weights as make_layer; bytes are the BF16 input's.
void run_quantize(benchmark::State& state, mlx::quant_params p) {
  const layer& l = make_layer(p);  // the output buffers' sizes, and the weights quantized once
  std::vector<std::uint16_t> in(rows * cols);
  std::mt19937 rng(1);
  std::normal_distribution<float> normal(0.0F, 0.02F);
  for (auto& x : in) x = safetensors::f32_to_bf16(normal(rng));
  std::vector<std::byte> weight(l.weight.size()), scales(l.scales.size()), biases(l.biases.size());
  const mlx::kernel_options options{static_cast<unsigned>(state.range(0))};
  for (auto _ : state) {
    if (!mlx::quantize(dtype::BF16, std::as_bytes(std::span(in)), rows, cols, p, {weight, scales, biases}, options)) {
      state.SkipWithError("quantize failed");
    }
    benchmark::DoNotOptimize(weight.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(state.iterations() * static_cast<std::int64_t>(in.size() * 2));
}

void BM_memcpy_bf16_out(benchmark::State& s) { run_memcpy(s, rows * cols * 2); }
void BM_memcpy_f32_out(benchmark::State& s) { run_memcpy(s, rows * cols * 4); }
void BM_dequant_affine4_g64_to_bf16(benchmark::State& s) { run_dequantize(s, affine4, dtype::BF16); }
void BM_dequant_affine4_g64_to_f32(benchmark::State& s) { run_dequantize(s, affine4, dtype::F32); }
void BM_dequant_affine8_g64_to_bf16(benchmark::State& s) { run_dequantize(s, affine8, dtype::BF16); }
void BM_dequant_affine8_g64_to_f32(benchmark::State& s) { run_dequantize(s, affine8, dtype::F32); }
void BM_dequant_mxfp4_to_bf16(benchmark::State& s) { run_dequantize(s, mxfp4, dtype::BF16); }
void BM_dequant_mxfp4_to_f32(benchmark::State& s) { run_dequantize(s, mxfp4, dtype::F32); }
// The other modes and widths (issue 24: every mode at >= 0.5x of memcpy), BF16 output.
void BM_dequant_mxfp8_to_bf16(benchmark::State& s) { run_dequantize(s, mxfp8, dtype::BF16); }
void BM_dequant_nvfp4_to_bf16(benchmark::State& s) { run_dequantize(s, nvfp4, dtype::BF16); }
void BM_dequant_affine2_g64_to_bf16(benchmark::State& s) { run_dequantize(s, affine2, dtype::BF16); }
void BM_dequant_affine3_g64_to_bf16(benchmark::State& s) { run_dequantize(s, affine3, dtype::BF16); }
void BM_dequant_affine6_g64_to_bf16(benchmark::State& s) { run_dequantize(s, affine6, dtype::BF16); }

// MLX quantization from BF16 (32 MiB in), against BM_memcpy_bf16_out (the same size).
void BM_quant_affine4_g64_from_bf16(benchmark::State& s) { run_quantize(s, affine4); }
void BM_quant_mxfp4_from_bf16(benchmark::State& s) { run_quantize(s, mxfp4); }

BENCHMARK(BM_memcpy_bf16_out)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_memcpy_f32_out)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_affine4_g64_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_affine4_g64_to_f32)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_affine8_g64_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_affine8_g64_to_f32)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_mxfp4_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_mxfp4_to_f32)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_mxfp8_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_nvfp4_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_affine2_g64_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_affine3_g64_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_dequant_affine6_g64_to_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quant_affine4_g64_from_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_quant_mxfp4_from_bf16)->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->UseRealTime();

}  // namespace
