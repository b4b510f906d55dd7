// SPDX-License-Identifier: Apache-2.0
#include "safetensors/pipeline/selection.h"

#include <algorithm>

#include <fmt/format.h>

#include "source_decorator.h"
#include "usage_error.h"

namespace safetensors::pipeline {
namespace {

using detail::usage;

// The chosen tensors of the inner source, under their new names.
class selected_source final : public source_decorator {
 public:
  selected_source(source_ptr inner, std::vector<std::size_t> chosen, std::vector<std::string> names)
      : source_decorator(std::move(inner)), chosen_(std::move(chosen)) {
    std::vector<source_tensor> kept;
    for (std::size_t i = 0; i < chosen_.size(); ++i) {
      kept.push_back(tensors_[chosen_[i]]);
      kept.back().name = std::move(names[i]);
    }
    tensors_ = std::move(kept);
  }

  status read(std::size_t index, const chunk_sink& consume) const override {
    return inner_->read(chosen_[index], consume);
  }

 private:
  std::vector<std::size_t> chosen_;  // inner index of each tensor
};

class metadata_source final : public source_decorator {
 public:
  metadata_source(source_ptr inner, std::optional<metadata_map> metadata) : source_decorator(std::move(inner)) {
    metadata_ = std::move(metadata);
  }
  status read(std::size_t index, const chunk_sink& consume) const override { return inner_->read(index, consume); }
};

class concatenated final : public tensor_source {
 public:
  concatenated(std::vector<source_ptr> inputs, const warning_handler& on_warning) : inputs_(std::move(inputs)) {
    std::vector<std::optional<metadata_map>> all;
    for (std::size_t i = 0; i < inputs_.size(); ++i) {
      const auto& in = *inputs_[i];
      for (std::size_t t = 0; t < in.tensors().size(); ++t) {
        tensors_.push_back(in.tensors()[t]);
        origins_.emplace_back(i, t);
      }
      notes_.insert(notes_.end(), in.notes().begin(), in.notes().end());
      shard_bytes_ = std::max(shard_bytes_, in.shard_bytes());
      input_bytes_ += in.input_bytes();
      all.push_back(in.metadata());
    }
    format_ = inputs_.empty() ? "SafeTensors" : inputs_.front()->format();
    format_id_ = inputs_.empty() ? "safetensors" : inputs_.front()->format_id();
    path_ = inputs_.empty() ? "" : inputs_.front()->path();
    metadata_ = common_metadata(all, on_warning);
  }

  status read(std::size_t index, const chunk_sink& consume) const override {
    return inputs_[origins_[index].first]->read(origins_[index].second, consume);
  }

 private:
  std::vector<source_ptr> inputs_;
  std::vector<std::pair<std::size_t, std::size_t>> origins_;  // (input, its tensor)
};

}  // namespace

result<rename_rule> rename_rule::make(std::string_view from, std::string_view to) {
  const bool from_star = from.ends_with('*');
  const bool to_star = to.ends_with('*');
  if (from_star != to_star) return usage("a prefix rename needs '*' at the end of both sides");
  if (from.empty()) return usage("a rename needs a tensor name to rename");
  rename_rule rule{std::string(from), std::string(to), from_star};
  if (rule.prefix) {
    rule.from.pop_back();
    rule.to.pop_back();
  }
  return rule;
}

std::optional<std::string> rename_rule::apply(std::string_view name) const {
  if (!prefix) return name == from ? std::optional<std::string>(to) : std::nullopt;
  if (!name.starts_with(from)) return std::nullopt;
  return to + std::string(name.substr(from.size()));
}

result<source_ptr> select_source(source_ptr inner, const tensor_filter& filter, std::span<const rename_rule> renames) {
  if (filter.selects_all() && renames.empty()) return inner;
  std::vector<std::string_view> all;
  for (const auto& t : inner->tensors()) all.push_back(t.name);
  if (auto s = filter.require_matches(all, inner->path()); !s) return std::move(s).err();
  std::vector<std::size_t> chosen;
  std::vector<std::string> names;
  std::vector<bool> used(renames.size(), false);
  for (std::size_t i = 0; i < all.size(); ++i) {
    if (!filter.selects(all[i])) continue;
    chosen.push_back(i);
    names.emplace_back(all[i]);
    for (std::size_t r = 0; r < renames.size(); ++r) {
      if (auto renamed = renames[r].apply(all[i])) {
        names.back() = std::move(*renamed);
        used[r] = true;
        break;
      }
    }
  }
  for (std::size_t r = 0; r < renames.size(); ++r) {
    if (used[r]) continue;
    const auto& rule = renames[r];
    return usage(fmt::format("rename: no selected tensor matches '{}{}'", rule.from, rule.prefix ? "*" : ""))
        .with_path(inner->path());
  }
  return source_ptr(std::make_unique<selected_source>(std::move(inner), std::move(chosen), std::move(names)));
}

result<source_ptr> edit_metadata(source_ptr inner, const metadata_edits& edits) {
  if (edits.empty()) return inner;
  std::optional<metadata_map> metadata = inner->metadata();
  for (const auto& key : edits.remove) {
    if (!metadata || metadata->erase(key) == 0) {
      return usage(fmt::format("metadata key '{}' not found (nothing to remove)", key)).with_path(inner->path());
    }
  }
  for (const auto& [key, value] : edits.set) {
    if (!metadata) metadata.emplace();
    (*metadata)[key] = value;
  }
  return source_ptr(std::make_unique<metadata_source>(std::move(inner), std::move(metadata)));
}

source_ptr concat_sources(std::vector<source_ptr> inputs, const warning_handler& on_warning) {
  if (inputs.size() == 1) return std::move(inputs.front());
  return std::make_unique<concatenated>(std::move(inputs), on_warning);
}

std::optional<metadata_map> common_metadata(std::span<const std::optional<metadata_map>> all,
                                            const warning_handler& on_warning) {
  if (all.empty()) return std::nullopt;
  std::optional<metadata_map> merged = all.front();
  std::vector<std::string> dropped;
  for (const auto& m : all.subspan(1)) {
    if (merged == m) continue;
    if (!merged || !m) {
      if (merged) {
        for (const auto& kv : *merged) dropped.push_back(kv.first);
      }
      merged.reset();
      continue;
    }
    std::erase_if(*merged, [&](const auto& kv) {
      const auto other = m->find(kv.first);
      if (other != m->end() && other->second == kv.second) return false;
      dropped.push_back(kv.first);
      return true;
    });
  }
  if (!dropped.empty() && on_warning) {
    on_warning(fmt::format("__metadata__ keys differing between shards are dropped: {}", fmt::join(dropped, ", ")));
  }
  return merged;
}

}  // namespace safetensors::pipeline
