// SPDX-License-Identifier: Apache-2.0
// Writing sharded checkpoints: size parsing, greedy shard assignment, all-or-nothing
// publication of shards and index.
#include <algorithm>
#include <cctype>

#include <fmt/format.h>

#include "safetensors/atomic_file.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/json_text.h"

namespace safetensors {
namespace {

error bad_size(std::string_view text, std::string_view why) {
  return make_error(error_code::invalid_argument, fmt::format("invalid size '{}': {}", text, why));
}

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() && std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) {
           return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y));
         });
}

}  // namespace

result<std::uint64_t> parse_byte_size(std::string_view text) {
  std::size_t i = 0;
  std::uint64_t whole = 0;
  bool digits = false;
  for (; i < text.size() && std::isdigit(static_cast<unsigned char>(text[i])); ++i, digits = true) {
    if (__builtin_mul_overflow(whole, 10U, &whole) ||
        __builtin_add_overflow(whole, static_cast<unsigned>(text[i] - '0'), &whole)) {
      return bad_size(text, "too large");
    }
  }
  std::string_view fraction;
  if (i < text.size() && text[i] == '.') {
    const std::size_t start = ++i;
    while (i < text.size() && std::isdigit(static_cast<unsigned char>(text[i]))) ++i;
    fraction = text.substr(start, i - start);
    digits = digits || !fraction.empty();
  }
  if (!digits) return bad_size(text, "expected a number such as 5GB, 500MB or 2GiB");
  while (i < text.size() && text[i] == ' ') ++i;
  const std::string_view unit = text.substr(i);
  static constexpr std::pair<std::string_view, std::uint64_t> units[] = {{"", 1},
                                                                         {"B", 1},
                                                                         {"KB", 1000},
                                                                         {"MB", 1'000'000},
                                                                         {"GB", 1'000'000'000},
                                                                         {"TB", 1'000'000'000'000},
                                                                         {"KiB", 1U << 10},
                                                                         {"MiB", 1U << 20},
                                                                         {"GiB", 1U << 30},
                                                                         {"TiB", std::uint64_t{1} << 40}};
  std::uint64_t multiplier = 0;
  for (const auto& [name, value] : units) {
    if (iequals(unit, name)) multiplier = value;
  }
  if (multiplier == 0) return bad_size(text, "unknown unit (use B, KB, MB, GB, TB, KiB, MiB, GiB or TiB)");
  std::uint64_t total = 0;
  if (__builtin_mul_overflow(whole, multiplier, &total)) return bad_size(text, "too large");
  // Fraction digits, exactly: floor(0.f * multiplier).
  std::uint64_t scale = multiplier;
  for (char c : fraction) {
    if (scale < 10) break;
    scale /= 10;
    if (__builtin_add_overflow(total, static_cast<std::uint64_t>(c - '0') * scale, &total)) {
      return bad_size(text, "too large");
    }
  }
  if (total == 0) return bad_size(text, "must be at least one byte");
  return total;
}

status check_shard_prefix(std::string_view prefix) {
  const auto refused = [&](std::string_view why) {
    return make_error(error_code::invalid_argument,
                      fmt::format("the shard file name prefix '{}' {}: it starts each file's name in the output "
                                  "directory",
                                  prefix, why));
  };
  if (prefix.empty()) return refused("is empty");
  if (prefix.find('/') != std::string_view::npos) return refused("has a '/'");
  if (prefix.find('\0') != std::string_view::npos) return refused("has a NUL byte");
  if (prefix == "." || prefix == "..") return refused("names a directory");
  return {};
}

result<shard_assignment> assign_shards(std::span<const tensor_spec> tensors, const shard_write_options& options) {
  if (options.max_shard_bytes == 0) {
    return make_error(error_code::invalid_argument, "the maximum shard size must be at least one byte");
  }
  if (auto s = check_shard_prefix(options.prefix); !s) return std::move(s).err();
  shard_assignment out;
  std::vector<std::size_t> current;
  std::uint64_t current_bytes = 0;
  for (std::size_t i = 0; i < tensors.size(); ++i) {
    const auto size = byte_size(tensors[i].type, tensors[i].shape);
    if (size.problem != size_problem::none) {
      return make_error(
          size.problem == size_problem::overflow ? error_code::validation_overflow : error_code::misaligned_slice,
          fmt::format("tensor '{}' has no valid byte size", tensors[i].name), std::nullopt, tensors[i].name);
    }
    if (size.bytes > options.max_shard_bytes) {
      out.shards.push_back({i});
      continue;
    }
    if (!current.empty() && current_bytes + size.bytes > options.max_shard_bytes) {
      out.shards.push_back(std::move(current));
      current.clear();
      current_bytes = 0;
    }
    current.push_back(i);
    current_bytes += size.bytes;
  }
  if (!current.empty() || out.shards.empty()) out.shards.push_back(std::move(current));
  const std::size_t n = out.shards.size();
  for (std::size_t s = 0; s < n; ++s) {
    out.file_names.push_back(n == 1 ? options.prefix + ".safetensors"
                                    : fmt::format("{}-{:05}-of-{:05}.safetensors", options.prefix, s + 1, n));
  }
  return out;
}

result<shard_assignment> write_checkpoint(const std::string& directory, std::span<const tensor_data> tensors,
                                          const shard_write_options& options) {
  std::vector<tensor_spec> specs;
  specs.reserve(tensors.size());
  for (const tensor_data& t : tensors) specs.push_back({t.name, t.type, t.shape});
  return write_checkpoint(
      directory, specs, [&](std::size_t i, const chunk_sink& sink) { return sink(tensors[i].data); }, options);
}

result<shard_assignment> write_checkpoint(const std::string& directory, std::span<const tensor_spec> specs,
                                          const tensor_producer& produce, const shard_write_options& options) {
  auto located = [&](error e) { return std::move(e).with_path(directory); };
  {
    std::vector<std::string_view> names;
    for (const tensor_spec& t : specs) names.push_back(t.name);
    std::sort(names.begin(), names.end());
    if (auto dup = std::adjacent_find(names.begin(), names.end()); dup != names.end()) {
      return located(make_error(error_code::invalid_argument, fmt::format("tensor name '{}' appears twice", *dup),
                                std::nullopt, std::string(*dup)));
    }
  }
  auto assignment = assign_shards(specs, options);
  if (!assignment) return located(std::move(assignment).err());

  // Phase 1: every file complete and fsynced under a temporary name.
  std::vector<atomic_file> pending;
  std::vector<std::pair<std::string_view, std::string_view>> weight_map;  // (tensor, shard file)
  std::uint64_t total_size = 0;
  for (std::size_t s = 0; s < assignment->shards.size(); ++s) {
    const std::string& file_name = assignment->file_names[s];
    std::vector<tensor_spec> shard_specs;
    for (std::size_t i : assignment->shards[s]) shard_specs.push_back(specs[i]);
    auto plan = write_plan::make(std::move(shard_specs), options.file);
    const std::string path = directory + "/" + file_name;
    if (!plan) {
      return std::move(plan).err().with_path(path);
    }
    auto out = atomic_file::create(path, plan->file_size());
    if (!out) return std::move(out).err();
    if (auto w = out->write_at(0, plan->header_bytes()); !w) return std::move(w).err();
    for (std::size_t i : assignment->shards[s]) {
      const planned_tensor* p = plan->find(specs[i].name);
      const std::uint64_t need = p->byte_size();
      std::uint64_t written = 0;
      auto wrong_size = [&](std::uint64_t got) {
        return make_error(error_code::invalid_argument,
                          fmt::format("tensor '{}' has {} bytes of data, its dtype and shape need {}", specs[i].name,
                                      got, need),
                          std::nullopt, specs[i].name)
            .with_path(path);
      };
      const chunk_sink sink = [&](std::span<const std::byte> chunk) -> status {
        if (chunk.size() > need - written) return wrong_size(written + chunk.size());
        if (auto w = out->write_at(plan->data_start() + p->begin + written, chunk); !w) return w;
        written += chunk.size();
        return {};
      };
      if (auto produced = produce(i, sink); !produced) {
        error e = std::move(produced).err();
        if (!e.tensor) e.tensor = specs[i].name;
        return std::move(e).with_path(path);
      }
      if (written != need) return wrong_size(written);
      weight_map.emplace_back(specs[i].name, file_name);
      total_size += need;
    }
    if (auto synced = out->sync(); !synced) return std::move(synced).err();
    pending.push_back(std::move(out).value());
  }
  if (pending.size() > 1) {
    std::sort(weight_map.begin(), weight_map.end());
    metadata_map extra = options.index_metadata;
    extra.erase("total_size");
    std::string json = "{\n  \"metadata\": {\n";
    std::vector<std::string> fields;
    bool size_written = false;
    for (const auto& [key, value] : extra) {
      if (!size_written && key > "total_size") {
        fields.push_back(fmt::format("    \"total_size\": {}", total_size));
        size_written = true;
      }
      fields.push_back(fmt::format("    {}: {}", json_quote(key), json_quote(value)));
    }
    if (!size_written) fields.push_back(fmt::format("    \"total_size\": {}", total_size));
    json += fmt::format("{}\n  }},\n  \"weight_map\": {{\n", fmt::join(fields, ",\n"));
    fields.clear();
    for (const auto& [tensor, shard] : weight_map) {
      fields.push_back(fmt::format("    {}: {}", json_quote(tensor), json_quote(shard)));
    }
    json += fmt::format("{}\n  }}\n}}\n", fmt::join(fields, ",\n"));
    auto index = atomic_file::create(directory + "/" + options.prefix + ".safetensors.index.json", json.size());
    if (!index) return std::move(index).err();
    if (auto w = index->write_at(0, std::as_bytes(std::span(json))); !w) return std::move(w).err();
    if (auto synced = index->sync(); !synced) return std::move(synced).err();
    pending.push_back(std::move(index).value());
  }

  // Phase 2: shards first, the index last.
  for (std::size_t i = 0; i < pending.size(); ++i) {
    if (auto published = pending[i].publish(); !published) {
      error e = std::move(published).err();
      if (i > 0) e.message += fmt::format(" ({} of {} files were already in place)", i, pending.size());
      return e;  // the remaining temporaries are removed by their destructors
    }
  }
  return assignment;
}

}  // namespace safetensors
