// SPDX-License-Identifier: Apache-2.0
// convert_options set by name from text (set_option in convert.h).
#include <charconv>

#include <fmt/format.h>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/pipeline/chunk_cast.h"
#include "safetensors/pipeline/convert.h"

namespace safetensors::pipeline {
namespace {

error bad_option(std::string_view option, std::string message) {
  return make_error(error_code::invalid_argument, fmt::format("{}: {}", option, message));
}

/// "--rename 'x': expected FROM=TO"
error bad_value(std::string_view option, std::string_view value, std::string_view expected) {
  return make_error(error_code::invalid_argument, fmt::format("{} '{}': expected {}", option, value, expected));
}

/// Splits "A=B" at the first '='; nullopt without one or with an empty A.
std::optional<std::pair<std::string, std::string>> pair_of(std::string_view text) {
  const auto eq = text.find('=');
  if (eq == std::string_view::npos || eq == 0) return std::nullopt;
  return std::pair{std::string(text.substr(0, eq)), std::string(text.substr(eq + 1))};
}

/// "F64, F32, BF16, ...": the dtypes a cast writes, widest first.
std::string floating_dtypes() {
  std::string list;
  const auto all = all_dtypes();
  for (auto t = all.rbegin(); t != all.rend(); ++t) {
    if (!castable(*t)) continue;
    if (!list.empty()) list += ", ";
    list += dtype_name(*t);
  }
  return list;
}

/// Sets the field `set_option` names; `spelled` is the option as the caller names it.
status set_field(convert_options& o, std::string_view name, std::string_view value, const std::string& spelled) {
  const auto number = [&](std::uint64_t& field, std::string_view expected) -> status {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), n);
    if (ec != std::errc() || end != value.data() + value.size()) return bad_value(spelled, value, expected);
    field = n;
    return {};
  };
  const auto byte_size = [&](std::uint64_t& field) -> status {
    auto bytes = parse_byte_size(value);
    if (!bytes) return bad_option(spelled, std::move(bytes).err().message);
    field = *bytes;
    return {};
  };
  const auto append = [&](std::vector<std::string>& list) -> status {
    list.emplace_back(value);
    return {};
  };
  const auto text = [&](std::string& field) -> status {
    field = value;
    return {};
  };
  if (name == "to") return text(o.to);
  if (name == "from") return text(o.from);
  if (name == "key") return text(o.read.key);
  if (name == "prefix") {
    if (auto s = check_shard_prefix(value); !s) return bad_option(spelled, s.err().message);
    return text(o.layout.prefix);
  }
  if (name == "only") return append(o.select.only);
  if (name == "exclude") return append(o.select.exclude);
  if (name == "cast_only") return append(o.cast_only.only);
  if (name == "cast_exclude") return append(o.cast_only.exclude);
  if (name == "remove_metadata") return append(o.metadata.remove);
  if (name == "alignment") return number(o.layout.alignment, "a number");
  if (name == "max_shard_size") return byte_size(o.layout.max_shard_bytes);
  if (name == "max_output_size") return byte_size(o.max_output_bytes);
  if (name == "max_expanded_size") return byte_size(o.read.npz.max_expanded_bytes);
  if (name == "max_ratio") {
    if (auto s = number(o.read.npz.max_compression_ratio, "a number above 0"); !s) return s;
    if (o.read.npz.max_compression_ratio == 0) return bad_value(spelled, value, "a number above 0");
    return {};
  }
  if (name == "dtype") {
    const auto t = parse_dtype(value);
    if (!t || !castable(*t)) {
      const std::string expected = fmt::format("a floating-point dtype ({})", floating_dtypes());
      return t ? bad_value(spelled, value, expected)
               : bad_option(spelled, fmt::format("unknown dtype '{}': expected {}", value, expected));
    }
    o.cast = *t;
    return {};
  }
  if (name == "shared") {
    if (value != "keep" && value != "dedup") return bad_value(spelled, value, "keep or dedup");
    o.read.shared = value == "dedup" ? shared_tensors::dedup : shared_tensors::keep;
    return {};
  }
  if (name == "set_metadata") {
    auto kv = pair_of(value);
    if (!kv) return bad_value(spelled, value, "KEY=VALUE");
    o.metadata.set[kv->first] = kv->second;
    return {};
  }
  if (name == "rename") {
    auto kv = pair_of(value);
    if (!kv) return bad_value(spelled, value, "FROM=TO");
    auto rule = rename_rule::make(kv->first, kv->second);
    if (!rule) {
      return make_error(error_code::invalid_argument, fmt::format("{} '{}': {}", spelled, value, rule.err().message));
    }
    o.rename.push_back(std::move(rule).value());
    return {};
  }
  return make_error(error_code::invalid_argument, fmt::format("unknown option '{}'", name));
}

/// The options that are on or off: set to false, one is as if never given.
bool* flag_field(convert_options& o, std::string_view name) {
  if (name == "saturate") return &o.saturate;
  if (name == "replace_input") return &o.replace_input;
  if (name == "one_file_output") return &o.one_file_output;
  if (name == "strict") return &o.read.strict;
  if (name == "compress") return &o.compress;
  if (name == "hash_long_names") return &o.hash_long_names;
  return nullptr;
}

}  // namespace

status set_option(convert_options& o, std::string_view name, std::string_view value) {
  const std::string spelled = o.names(name);
  if (bool* field = flag_field(o, name)) {
    if (value == "1" || value == "true") {
      *field = true;
      o.given.emplace(name);
    } else if (value == "0" || value == "false") {
      *field = false;
      if (const auto it = o.given.find(name); it != o.given.end()) o.given.erase(it);
    } else {
      return bad_value(spelled, value, "a boolean (1, 0, true, false)");
    }
    return {};
  }
  if (auto s = set_field(o, name, value, spelled); !s) return s;
  o.given.emplace(name);
  return {};
}

}  // namespace safetensors::pipeline
