// SPDX-License-Identifier: Apache-2.0
// Benchmark inputs: model-like headers built with the library's write_plan, sizes from
// environment variables (so CI smoke runs stay tiny), and scratch-file helpers.
#pragma once

#include <fcntl.h>
#include <unistd.h>

#include <array>
#include <cstdint>
#include <cstdlib>
#include <map>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "safetensors/writer.h"

namespace safetensors::bench {

/// An unsigned environment variable, or `fallback` when unset or not a number.
inline std::uint64_t env_u64(const char* name, std::uint64_t fallback) {
  const char* v = std::getenv(name);
  if (v == nullptr || *v == '\0') return fallback;
  char* end = nullptr;
  const unsigned long long x = std::strtoull(v, &end, 10);
  return (end != nullptr && *end == '\0') ? x : fallback;
}

/// Directory for scratch files: SAFETENSORS_BENCH_DIR, else TMPDIR, else /tmp.
inline std::string scratch_dir() {
  for (const char* var : {"SAFETENSORS_BENCH_DIR", "TMPDIR"}) {
    if (const char* v = std::getenv(var); v != nullptr && *v != '\0') return v;
  }
  return "/tmp";
}

/// `count` tensors laid out like a decoder-only transformer, nine per layer, BF16.
/// `short_names` uses llama.cpp-style names ("blk.7.attn_q.weight") and tiny shapes so
/// that a million entries stay under the reference's 100,000,000-byte header cap;
/// otherwise Hugging Face names ("model.layers.7.self_attn.q_proj.weight") with
/// width-`width` shapes.
inline std::vector<tensor_spec> model_specs(std::size_t count, bool short_names, std::uint64_t width) {
  static constexpr std::array<std::string_view, 9> hf = {
      "self_attn.q_proj.weight", "self_attn.k_proj.weight", "self_attn.v_proj.weight",
      "self_attn.o_proj.weight", "mlp.gate_proj.weight",    "mlp.up_proj.weight",
      "mlp.down_proj.weight",    "input_layernorm.weight",  "post_attention_layernorm.weight"};
  static constexpr std::array<std::string_view, 9> gg = {"attn_q", "attn_k",   "attn_v",    "attn_output", "ffn_gate",
                                                         "ffn_up", "ffn_down", "attn_norm", "ffn_norm"};
  std::vector<tensor_spec> specs;
  specs.reserve(count);
  const std::uint64_t w = width;
  for (std::size_t i = 0; i < count; ++i) {
    const std::size_t layer = i / 9;
    const std::size_t part = i % 9;
    tensor_spec t;
    t.name = short_names ? fmt::format("blk.{}.{}.weight", layer, gg[part])
                         : fmt::format("model.layers.{}.{}", layer, hf[part]);
    t.type = dtype::BF16;
    switch (part) {
      case 0:
      case 3: t.shape = {w, w}; break;
      case 1:
      case 2: t.shape = {w / 4, w}; break;
      case 4:
      case 5: t.shape = {w * 7 / 2, w}; break;
      case 6: t.shape = {w, w * 7 / 2}; break;
      default: t.shape = {w}; break;
    }
    specs.push_back(std::move(t));
  }
  return specs;
}

/// A planned model-like file of `count` tensors. Above 200,000 tensors the short-name
/// layout is used (see model_specs). Cached: plans of a million tensors take a while.
inline const write_plan& model_plan(std::size_t count) {
  static std::map<std::size_t, write_plan> cache;
  auto it = cache.find(count);
  if (it != cache.end()) return it->second;
  const bool short_names = count > 200'000;
  auto plan = write_plan::make(model_specs(count, short_names, short_names ? 4 : 64));
  if (!plan) throw std::runtime_error(plan.err().message);
  return cache.emplace(count, std::move(plan).value()).first->second;
}

/// The header JSON (padding included) of a plan: what parse_header receives.
inline std::span<const std::byte> header_json(const write_plan& plan) { return plan.header_bytes().subspan(8); }

/// Writes the plan's header and extends the file to its full size without writing the
/// data (a sparse file): enough for opening and viewing, cheap on disk.
inline std::string write_sparse_file(const write_plan& plan, const std::string& name) {
  const std::string path = scratch_dir() + "/" + name;
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  if (fd < 0) throw std::runtime_error("cannot create " + path);
  const auto head = plan.header_bytes();
  const bool ok = ::write(fd, head.data(), head.size()) == static_cast<ssize_t>(head.size()) &&
                  ::ftruncate(fd, static_cast<off_t>(plan.file_size())) == 0;
  ::close(fd);
  if (!ok) throw std::runtime_error("cannot write " + path);
  return path;
}

}  // namespace safetensors::bench
