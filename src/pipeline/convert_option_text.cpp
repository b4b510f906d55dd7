// SPDX-License-Identifier: Apache-2.0
// convert_options set by name from text (set_option in convert.h).
#include <charconv>

#include <fmt/format.h>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/pipeline/convert.h"

namespace safetensors::pipeline {
namespace {

error bad(std::string_view name, std::string_view value, std::string_view expected) {
  return make_error(error_code::invalid_argument, fmt::format("option '{}': '{}' is not {}", name, value, expected));
}

result<bool> boolean(std::string_view name, std::string_view value) {
  if (value == "1" || value == "true") return true;
  if (value == "0" || value == "false") return false;
  return bad(name, value, "a boolean (1, 0, true, false)");
}

/// Splits "A=B" at the first '='; nullopt without one or with an empty A.
std::optional<std::pair<std::string, std::string>> pair_of(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  return std::pair{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

}  // namespace

status set_option(convert_options& o, std::string_view name, std::string_view value) {
  const auto flag = [&](bool& field) -> status {
    auto b = boolean(name, value);
    if (!b) return std::move(b).err();
    field = *b;
    return {};
  };
  const auto append = [&](std::vector<std::string>& list) -> status {
    list.emplace_back(value);
    return {};
  };
  if (name == "to") {
    o.to = value;
    return {};
  }
  if (name == "from") {
    o.from = value;
    return {};
  }
  if (name == "dtype") {
    auto t = parse_dtype(value);
    if (!t) {
      return make_error(error_code::invalid_argument,
                        fmt::format("option 'dtype': unknown dtype '{}' (F32, F16, BF16, ...)", value));
    }
    o.cast = *t;
    return {};
  }
  if (name == "saturate") return flag(o.saturate);
  if (name == "replace_input") return flag(o.replace_input);
  if (name == "strict") return flag(o.read.strict);
  if (name == "compress") return flag(o.compress);
  if (name == "hash_long_names") return flag(o.hash_long_names);
  if (name == "only") return append(o.select.only);
  if (name == "exclude") return append(o.select.exclude);
  if (name == "cast_only") return append(o.cast_only.only);
  if (name == "cast_exclude") return append(o.cast_only.exclude);
  if (name == "remove_metadata") return append(o.metadata.remove);
  if (name == "key") {
    o.read.key = value;
    return {};
  }
  if (name == "prefix") {
    o.layout.prefix = value;
    return {};
  }
  if (name == "shared") {
    if (value != "keep" && value != "dedup") return bad(name, value, "keep or dedup");
    o.read.shared = value == "dedup" ? shared_tensors::dedup : shared_tensors::keep;
    return {};
  }
  if (name == "alignment") {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size()) return bad(name, value, "a number");
    o.layout.alignment = n;
    return {};
  }
  if (name == "max_shard_size") {
    auto bytes = parse_byte_size(value);
    if (!bytes) return std::move(bytes).err();
    o.layout.max_shard_bytes = *bytes;
    return {};
  }
  if (name == "max_output_size") {
    auto bytes = parse_byte_size(value);
    if (!bytes) return std::move(bytes).err();
    o.max_output_bytes = *bytes;
    return {};
  }
  if (name == "rename" || name == "set_metadata") {
    auto kv = pair_of(value);
    if (!kv) return bad(name, value, name == "rename" ? "FROM=TO" : "KEY=VALUE");
    if (name == "set_metadata") {
      o.metadata.set[kv->first] = kv->second;
      return {};
    }
    auto rule = rename_rule::make(kv->first, kv->second);
    if (!rule) return std::move(rule).err();
    o.rename.push_back(std::move(rule).value());
    return {};
  }
  return make_error(error_code::invalid_argument, fmt::format("unknown option '{}'", name));
}

}  // namespace safetensors::pipeline
