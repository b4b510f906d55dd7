// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_tensors.h"

#include <algorithm>

#include <fmt/format.h>

#include "select.h"

namespace st_cli {

safetensors::result<safetensors::checkpoint> open_checkpoint_input(const std::string& path) {
  safetensors::checkpoint_options options;
  options.shard.backend = safetensors::io_backend::pread;
  auto c = safetensors::checkpoint::open(path, options);
  if (c) print_checkpoint_warnings(*c);
  return c;
}

void print_checkpoint_warnings(const safetensors::checkpoint& c) {
  for (const auto& w : c.warnings()) fmt::print(stderr, "safetensors: warning: {}\n", w);
}

safetensors::result<std::vector<shard_tensor>> select_checkpoint_tensors(const safetensors::checkpoint& c,
                                                                         const std::vector<std::string>& only,
                                                                         const std::vector<std::string>& exclude) {
  for (const auto& pattern : only) {
    const auto tensors = c.tensors();
    if (std::none_of(tensors.begin(), tensors.end(), [&](const auto& t) { return name_matches(pattern, t.name); })) {
      safetensors::error e = safetensors::make_error(safetensors::error_code::tensor_not_found,
                                                     fmt::format("no tensor matches '{}'", pattern));
      e.path = c.sharded() ? c.index_path() : c.shards().front().file.path();
      return e;
    }
  }
  std::vector<shard_tensor> out;
  for (const auto& shard : c.shards()) {
    for (const auto& t : shard.file.tensors()) {
      const auto match = [&](const std::string& p) { return name_matches(p, t.name); };
      if (!only.empty() && std::none_of(only.begin(), only.end(), match)) continue;
      if (std::any_of(exclude.begin(), exclude.end(), match)) continue;
      out.push_back({&shard.file, &t});
    }
  }
  return out;
}

}  // namespace st_cli
