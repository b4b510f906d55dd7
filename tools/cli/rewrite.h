// SPDX-License-Identifier: Apache-2.0
// Writing a new file from tensors of open files (extract, cast, merge): planned with
// safetensors::write_plan, streamed chunk by chunk through safetensors::stream_writer,
// so memory stays bounded and the target appears complete or not at all.
#pragma once

#include <string>
#include <vector>

#include "safetensors/convert.h"
#include "safetensors/file.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/writer.h"

namespace st_cli {

using safetensors::pipeline::in_place;

struct output_tensor {
  const safetensors::file* file = nullptr;  ///< where `source` is read from
  const safetensors::tensor_info* source = nullptr;
  std::string name;
  safetensors::dtype type = safetensors::dtype::U8;  ///< differs from the source's for a cast
};

/// Writes `tensors` (read from their files, converted where the dtype differs) to
/// `out_path`, after check_output(out_path, inputs, rule). Progress counts source bytes.
/// Errors carry the file and tensor concerned.
[[nodiscard]] safetensors::status write_rewritten(const std::string& out_path, std::span<const std::string> inputs,
                                                  in_place rule, const std::vector<output_tensor>& tensors,
                                                  const safetensors::write_options& options, bool show_progress,
                                                  const std::string& label,
                                                  const safetensors::encode_options& encode = {});

}  // namespace st_cli
