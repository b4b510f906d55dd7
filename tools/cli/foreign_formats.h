// SPDX-License-Identifier: Apache-2.0
// The CLI's side of the other formats: the options of `convert` (the library's pipeline,
// safetensors/pipeline/convert.h). `inspect` shows them as the format table describes them
// (safetensors/pipeline/format_table.h).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace st_cli {

/// What `safetensors convert` was given: its flags are the library's options (option_flags.h),
/// which the library checks, and refuses where they do not apply.
struct convert_args {
  std::string in;
  std::string out;
  std::string to;               ///< output format: safetensors, npz, npy, gguf; empty: from the extension
  std::string key;              ///< PyTorch: the nested dict holding the tensors ("state_dict")
  std::string shared = "keep";  ///< PyTorch: tensors sharing storage: "keep" (copy each) or "dedup"
  std::string dtype = "keep";   ///< floating tensors become F32, F16 or BF16; keep
  std::string rename_long;      ///< GGUF output: "hash" shortens names over 63 bytes
  bool compress = false;        ///< .npz output: deflate members
  bool quiet = false;
  bool strict = false;                     ///< PyTorch: refuse skipped objects and tensors instead of warning
  std::string max_expanded_size = "4GiB";  ///< .npz input: deflated members' total expanded size
  std::uint64_t max_ratio = 200;           ///< .npz input: compression ratio of a member over 1 MiB
  std::string max_output_size;             ///< --max-output-size; empty: the default budget
};

}  // namespace st_cli
