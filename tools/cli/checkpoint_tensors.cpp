// SPDX-License-Identifier: Apache-2.0
#include "checkpoint_tensors.h"

#include <algorithm>

#include <fmt/format.h>

#include "remote_input.h"
#include "report.h"
#include "select.h"

namespace st_cli {

safetensors::result<safetensors::checkpoint> open_checkpoint_input(const std::string& path) {
  safetensors::checkpoint_options options;
  options.shard.backend = safetensors::io_backend::pread;
  auto c = open_checkpoint_at(path, options);
  if (c) print_checkpoint_warnings(*c);
  return c;
}

void print_checkpoint_warnings(const safetensors::checkpoint& c) {
  for (const auto& w : c.warnings()) print_warning(w);
}

safetensors::result<std::vector<shard_tensor>> select_checkpoint_tensors(const safetensors::checkpoint& c,
                                                                         const std::vector<std::string>& only,
                                                                         const std::vector<std::string>& exclude) {
  std::vector<std::string_view> names;
  for (const auto& t : c.tensors()) names.push_back(t.name);
  const std::string path = c.sharded() ? c.index_path() : c.shards().front().file.path();
  if (auto s = require_matches(names, only, exclude, path); !s) return std::move(s).err();
  std::vector<shard_tensor> out;
  for (const auto& shard : c.shards()) {
    for (const auto& t : shard.file.tensors()) {
      if (!only.empty() && !any_matches(only, t.name)) continue;
      if (any_matches(exclude, t.name)) continue;
      out.push_back({&shard.file, &t});
    }
  }
  return out;
}

}  // namespace st_cli
