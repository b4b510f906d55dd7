// SPDX-License-Identifier: Apache-2.0
// PyTorch checkpoints (.pt/.bin, zip or legacy; a sharded directory with
// pytorch_model.bin.index.json) as a tensor_source. Nothing in the input is executed: the
// restricted unpickler only describes tensors.
#include <filesystem>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "input_size.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/pipeline/tensor_source.h"
#include "safetensors/writer.h"

namespace safetensors::pipeline {
namespace {

// One tensor to write, and where its bytes come from.
struct tensor_origin {
  const torch::checkpoint* checkpoint = nullptr;
  std::size_t index = 0;
};

// Everything the inputs hold, after --shared is applied.
struct conversion {
  std::vector<std::unique_ptr<torch::checkpoint>> inputs;
  std::vector<tensor_spec> specs;
  std::vector<tensor_origin> sources;
  metadata_map metadata{{"format", "pt"}};
  std::vector<std::string> notes;  // shared storages, skipped values: printed after writing
  std::uint64_t total_bytes = 0;
  std::uint64_t input_bytes = 0;  // of the files read
};

// --shared dedup: a tensor that is exactly the same view as an earlier one (tied weights)
// is not written; __metadata__ maps its name to the kept one, as save_model does. Other
// views of a shared storage are written as copies. --shared keep copies every tensor.
/// What makes two tensors of one storage the same view (torch::same_view).
using view_key = std::tuple<std::uint64_t, dtype, std::vector<std::uint64_t>, std::vector<std::uint64_t>>;

/// "deduplicated: b is a (recorded in __metadata__)" for a few aliases; one line for many, so a
/// checkpoint of 2,000 names over one storage does not print 2,000 lines.
void note_aliases(std::span<const torch::tensor> tensors, const std::vector<std::size_t>& members,
                  std::vector<std::string>& notes) {
  constexpr std::size_t listed = 3;
  const std::string& kept = tensors[members.front()].name;
  const std::size_t aliases = members.size() - 1;
  if (aliases <= listed + 1) {
    for (std::size_t k = 1; k < members.size(); ++k) {
      notes.push_back(fmt::format("deduplicated: {} is {} (recorded in __metadata__)", tensors[members[k]].name, kept));
    }
    return;
  }
  std::vector<std::string_view> first;
  for (std::size_t k = 1; k <= listed; ++k) first.push_back(tensors[members[k]].name);
  notes.push_back(fmt::format("deduplicated: {} names are {}: {} and {} more (recorded in __metadata__)", aliases, kept,
                              fmt::join(first, ", "), aliases - listed));
}

std::vector<bool> plan_shared(const torch::checkpoint& c, bool dedup, conversion& out) {
  const auto tensors = c.tensors();
  std::vector<bool> dropped(tensors.size(), false);
  for (const auto& group : torch::shared_storage_groups(tensors)) {
    std::vector<std::string> names;
    for (std::size_t i : group) names.push_back(tensors[i].name);
    if (!dedup) {
      out.notes.push_back(fmt::format("shared storage, each written as a copy: {}", fmt::join(names, ", ")));
      continue;
    }
    // The first name of each view keeps the data; later names of the same view become aliases.
    // One map lookup a name: comparing every pair was quadratic (50,000 views of one storage: 5 s).
    std::map<view_key, std::vector<std::size_t>> names_of_view;
    for (std::size_t i : group) {
      const auto& t = tensors[i];
      names_of_view[view_key{t.storage_offset, t.type, t.shape, t.strides}].push_back(i);
    }
    for (const auto& [view, members] : names_of_view) {
      const std::string& kept = tensors[members.front()].name;
      for (std::size_t k = 1; k < members.size(); ++k) {
        dropped[members[k]] = true;
        out.metadata[tensors[members[k]].name] = kept;
      }
      note_aliases(tensors, members, out.notes);
    }
  }
  return dropped;
}

status add_checkpoint(const std::string& path, const source_options& options, conversion& out) {
  torch::open_options open_options;
  open_options.key = options.key;
  open_options.strict = options.strict;
  auto opened = torch::checkpoint::open(path, open_options);
  if (!opened) return std::move(opened).err();
  out.inputs.push_back(std::make_unique<torch::checkpoint>(std::move(opened).value()));
  out.input_bytes += detail::file_bytes(path);
  const torch::checkpoint& c = *out.inputs.back();
  const auto dropped = plan_shared(c, options.shared == shared_tensors::dedup, out);
  for (std::size_t i = 0; i < c.tensors().size(); ++i) {
    if (dropped[i]) continue;
    const auto& t = c.tensors()[i];
    out.specs.push_back({t.name, t.type, t.shape});
    out.sources.push_back({&c, i});
    out.total_bytes += byte_size(t.type, t.shape).bytes;
  }
  for (const auto& s : c.skipped()) {
    if (s.kind == torch::skip_kind::not_tensor) {
      out.notes.push_back(fmt::format("skipped {}: {}", s.name, s.reason));
    } else if (options.on_warning) {
      // Objects outside the pickle allowlist and tensors SafeTensors cannot hold (strict refuses them).
      options.on_warning(fmt::format("skipped '{}': {} (strict mode refuses it)", s.name, s.reason));
    }
  }
  return {};
}

// The conversion as a tensor_source: tensors in the inputs' order, read from their checkpoint.
class pytorch_source final : public tensor_source {
 public:
  pytorch_source(const std::string& path, conversion c, std::uint64_t shard_bytes) : c_(std::move(c)) {
    format_ = "PyTorch";
    format_id_ = "pytorch";
    path_ = path;
    for (const auto& spec : c_.specs) tensors_.push_back({spec.name, spec.type, spec.shape});
    metadata_ = c_.metadata;
    notes_ = c_.notes;
    shard_bytes_ = shard_bytes;
    input_bytes_ = c_.input_bytes;
  }

  status read(std::size_t index, const chunk_sink& consume) const override {
    const tensor_origin& s = c_.sources[index];
    return s.checkpoint->read_tensor(s.index, consume);
  }

 private:
  conversion c_;
};

result<source_ptr> open_directory(const std::string& path, const source_options& options) {
  auto index = torch::read_shard_index(path);
  if (!index) return std::move(index).err().with_path(path);
  conversion c;
  std::uint64_t largest_shard = 0;
  for (const auto& shard : index->shard_paths) {
    const std::uint64_t before = c.total_bytes;
    if (auto ok = add_checkpoint(shard, options, c); !ok) return std::move(ok).err().with_path(shard);
    largest_shard = std::max(largest_shard, c.total_bytes - before);
  }
  // Every tensor the index names must be in its shard.
  std::map<std::string, std::string> found;
  for (const auto& s : c.sources) found.emplace(s.checkpoint->tensors()[s.index].name, s.checkpoint->path());
  for (const auto& [tensor, shard] : index->weight_map) {
    auto it = found.find(tensor);
    if (it == found.end() || it->second != shard) {
      if (options.shared == shared_tensors::dedup && c.metadata.contains(tensor)) continue;
      return make_error(error_code::shard_mismatch,
                        fmt::format("the index puts '{}' in {}, which does not hold it", tensor, shard))
          .with_path(path);
    }
  }
  return source_ptr(std::make_unique<pytorch_source>(path, std::move(c), std::max<std::uint64_t>(largest_shard, 1)));
}

}  // namespace

result<source_ptr> open_pytorch_source(const std::string& path, const source_options& options) {
  std::error_code ec;
  // A sharded checkpoint: its directory or its index file (convert_paths.h).
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".index.json")) return open_directory(path, options);
  conversion c;
  if (auto ok = add_checkpoint(path, options, c); !ok) return std::move(ok).err().with_path(path);
  return source_ptr(std::make_unique<pytorch_source>(path, std::move(c), 0));
}

}  // namespace safetensors::pipeline
