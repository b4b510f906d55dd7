// SPDX-License-Identifier: Apache-2.0
// Helpers shared by `dequantize` and `quantize`: chunked tensor copies into a
// stream_writer, and a progress line on a terminal.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "safetensors/file.h"
#include "safetensors/writer.h"

namespace st_cli {

/// Bytes of input or output a command holds in memory per chunk.
inline constexpr std::size_t mlx_chunk_bytes = 32U << 20;

/// Appends a tensor's bytes from `in` to `out` unchanged, `mlx_chunk_bytes` at a time.
[[nodiscard]] safetensors::status copy_tensor(const safetensors::file& in, const safetensors::tensor_info& t,
                                              safetensors::stream_writer& out);

/// "verb: i/n tensors" on stderr, rewritten in place; silent unless stderr is a terminal.
class progress_line {
 public:
  progress_line(std::string verb, std::size_t total);
  void step(std::string_view tensor);
  ~progress_line();
  progress_line(const progress_line&) = delete;
  progress_line& operator=(const progress_line&) = delete;

 private:
  std::string verb_;
  std::size_t total_;
  std::size_t done_ = 0;
  bool enabled_;
};

/// Prints each warning as "safetensors: warning: <file>: <text>".
void print_warnings(const std::string& file, const std::vector<std::string>& warnings);

}  // namespace st_cli
