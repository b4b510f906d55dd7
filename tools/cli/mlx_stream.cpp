// SPDX-License-Identifier: Apache-2.0
// Chunked copies and the progress line of the MLX subcommands.
#include "mlx_stream.h"

#include <unistd.h>

#include <algorithm>

#include <fmt/format.h>

namespace st_cli {

safetensors::status copy_tensor(const safetensors::file& in, const safetensors::tensor_info& t,
                                safetensors::stream_writer& out) {
  const auto data = in.view(t).data;
  for (std::size_t at = 0; at < data.size(); at += mlx_chunk_bytes) {
    const std::size_t n = std::min(mlx_chunk_bytes, data.size() - at);
    if (auto s = out.append(t.name, data.subspan(at, n)); !s) return s;
  }
  return {};
}

progress_line::progress_line(std::string verb, std::size_t total)
    : verb_(std::move(verb)), total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}

void progress_line::step(std::string_view tensor) {
  ++done_;
  if (!enabled_) return;
  const std::string_view shown = tensor.size() > 60 ? tensor.substr(tensor.size() - 60) : tensor;
  fmt::print(stderr, "\r\033[K{}: {}/{} {}", verb_, done_, total_, shown);
  std::fflush(stderr);
}

progress_line::~progress_line() {
  if (enabled_ && done_ > 0) fmt::print(stderr, "\r\033[K");
}

void print_warnings(const std::string& file, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) fmt::print(stderr, "safetensors: warning: {}: {}\n", file, w);
}

}  // namespace st_cli
