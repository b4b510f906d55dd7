// SPDX-License-Identifier: Apache-2.0
// Conversion throughput in bytes of output per second, each conversion paired with a
// memcpy producing the same number of output bytes in the same run
// ("convert/<case>/<n>" beside "convert/<case>/memcpy_baseline/<n>").
#include <benchmark/benchmark.h>

#include <cstring>
#include <random>
#include <vector>

#include "safetensors/convert.h"

namespace {

using safetensors::dtype;

std::vector<std::byte> random_bytes(std::size_t n) {
  std::mt19937 rng(42);
  std::vector<std::byte> out(n);
  for (auto& b : out) b = std::byte{static_cast<std::uint8_t>(rng())};
  return out;
}

std::vector<float> random_floats(std::size_t n) {
  std::mt19937 rng(42);
  std::normal_distribution<float> dist(0.0F, 1.0F);
  std::vector<float> out(n);
  for (auto& v : out) v = dist(rng);
  return out;
}

void decode_case(benchmark::State& state, dtype from) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto src = random_bytes(safetensors::byte_size(from, n).bytes);
  std::vector<float> dst(n);
  for (auto _ : state) {
    if (!safetensors::decode_to_f32(from, src, dst).ok()) state.SkipWithError("decode failed");
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(n * sizeof(float)));
}

void encode_case(benchmark::State& state, dtype to) {
  const auto n = static_cast<std::size_t>(state.range(0));
  const auto src = random_floats(n);
  std::vector<std::byte> dst(safetensors::byte_size(to, n).bytes);
  for (auto _ : state) {
    if (!safetensors::encode_from_f32(to, src, dst).ok()) state.SkipWithError("encode failed");
    benchmark::DoNotOptimize(dst.data());
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(dst.size()));
}

// memcpy of `bytes_per_element` * n bytes: the output size of the paired conversion, at
// memcpy's best: both ends 64-byte congruent, the destination 64 bytes further into its page
// than the source. (Two blocks from malloc's mmap sit at the same page offset, and on AMD EPYC
// glibc's rep movsb then copies an L2-sized block at 1.6 GB/s instead of tens: 4 KiB aliasing.)
void memcpy_case(benchmark::State& state, std::size_t bytes_per_element) {
  const auto bytes = static_cast<std::size_t>(state.range(0)) * bytes_per_element;
  const auto src = random_bytes(bytes);
  std::vector<std::byte> dst_storage(bytes + 64);
  std::byte* dst = dst_storage.data() + 64;
  for (auto _ : state) {
    std::memcpy(dst, src.data(), bytes);
    benchmark::DoNotOptimize(dst);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<std::int64_t>(state.iterations()) * static_cast<std::int64_t>(bytes));
}

// 64 Ki elements stay in cache; 16 Mi elements (64 MiB of F32) go to memory.
constexpr dtype bf16 = dtype::BF16;
constexpr dtype f16 = dtype::F16;
constexpr dtype e4m3 = dtype::F8_E4M3;

BENCHMARK_CAPTURE(decode_case, bf16_to_f32, bf16)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/bf16_to_f32");
BENCHMARK_CAPTURE(memcpy_case, bf16_to_f32, 4)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/bf16_to_f32/memcpy_baseline");
BENCHMARK_CAPTURE(decode_case, f16_to_f32, f16)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/f16_to_f32");
BENCHMARK_CAPTURE(memcpy_case, f16_to_f32, 4)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/f16_to_f32/memcpy_baseline");
BENCHMARK_CAPTURE(decode_case, f8_e4m3_to_f32, e4m3)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/f8_e4m3_to_f32");
BENCHMARK_CAPTURE(memcpy_case, f8_e4m3_to_f32, 4)
    ->Arg(1 << 16)
    ->Arg(1 << 24)
    ->Name("convert/f8_e4m3_to_f32/memcpy_baseline");
BENCHMARK_CAPTURE(encode_case, f32_to_bf16, bf16)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/f32_to_bf16");
BENCHMARK_CAPTURE(memcpy_case, f32_to_bf16, 2)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/f32_to_bf16/memcpy_baseline");
BENCHMARK_CAPTURE(encode_case, f32_to_f16, f16)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/f32_to_f16");
BENCHMARK_CAPTURE(memcpy_case, f32_to_f16, 2)->Arg(1 << 16)->Arg(1 << 24)->Name("convert/f32_to_f16/memcpy_baseline");

}  // namespace
