// SPDX-License-Identifier: Apache-2.0
// The CLI's side of the other formats: `convert` between SafeTensors and PyTorch, NumPy
// and GGUF files, and `inspect` of those files. One source file per format
// (convert_pytorch.cpp, convert_numpy.cpp, convert_gguf.cpp) implements its part.
#pragma once

#include <cstdint>
#include <string>

#include "report.h"

namespace st_cli {

/// What `safetensors convert` was asked; each converter reads the options that apply to it.
struct convert_args {
  std::string in;
  std::string out;
  std::string key;              ///< PyTorch: the nested dict holding the tensors ("state_dict")
  std::string shared = "keep";  ///< PyTorch: tensors sharing storage: "keep" (copy each) or "dedup"
  std::string dtype = "keep";   ///< GGUF: F32, F16, BF16 or keep
  std::string rename_long;      ///< GGUF output: "hash" shortens names over 63 bytes
  bool compress = false;        ///< .npz output: deflate members
  bool quiet = false;
  bool strict = false;                     ///< PyTorch: refuse skipped objects and tensors instead of warning
  std::string max_expanded_size = "4GiB";  ///< .npz input: deflated members' total expanded size
  std::uint64_t max_ratio = 200;           ///< .npz input: compression ratio of a member over 1 MiB
};

run_result convert_pytorch_to_safetensors(const convert_args& args);
run_result convert_numpy_to_safetensors(const convert_args& args);
run_result convert_safetensors_to_numpy(const convert_args& args);
run_result convert_gguf_to_safetensors(const convert_args& args);
run_result convert_safetensors_to_gguf(const convert_args& args);

/// `inspect` of a non-SafeTensors file; `json` as inspect --json.
run_result inspect_pytorch(const std::string& path, bool json);
run_result inspect_numpy(const std::string& path, bool json);
run_result inspect_gguf(const std::string& path, bool json);

}  // namespace st_cli
