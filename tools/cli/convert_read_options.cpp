// SPDX-License-Identifier: Apache-2.0
#include "convert_read_options.h"

#include <fmt/format.h>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"

namespace st_cli {

safetensors::result<safetensors::numpy::npz_options> npz_limits_of(const convert_args& args) {
  auto expanded = safetensors::parse_byte_size(args.max_expanded_size);
  if (!expanded) return usage_error("--max-expanded-size: " + expanded.err().message);
  safetensors::numpy::npz_options options;
  options.max_expanded_bytes = *expanded;
  options.max_compression_ratio = args.max_ratio;
  return options;
}

}  // namespace st_cli
