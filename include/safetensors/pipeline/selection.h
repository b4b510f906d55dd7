// SPDX-License-Identifier: Apache-2.0
// Choosing and renaming a source's tensors, and editing its `__metadata__`, on the way to a
// sink: what `extract`, `cast --only` and every "a subset of this checkpoint" need. Patterns
// follow safetensors/glob.h (name_matches). A pattern or rule that matches nothing is an
// error, so a typo never silently selects nothing, or everything.
#pragma once

#include <map>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/error.h"
#include "safetensors/pipeline/tensor_filter.h"
#include "safetensors/pipeline/tensor_source.h"

namespace safetensors::pipeline {

/// Renames one tensor, or with a '*' ending both sides ("model.*" -> "base.*") a prefix.
struct rename_rule {
  std::string from;
  std::string to;
  bool prefix = false;

  /// InvalidArgument when only one side ends in '*' (or `from` is empty).
  [[nodiscard]] static result<rename_rule> make(std::string_view from, std::string_view to);
  /// `name` renamed, or nullopt when the rule does not apply to it.
  [[nodiscard]] std::optional<std::string> apply(std::string_view name) const;
};

/// Keys set (added or replaced) and removed in `__metadata__`, removals first.
struct metadata_edits {
  std::map<std::string, std::string> set;
  std::vector<std::string> remove;

  [[nodiscard]] bool empty() const noexcept { return set.empty() && remove.empty(); }
};

/// `inner`'s tensors that `filter` selects, renamed by the first rule that applies to each.
/// Errors: a filter pattern or a rule that matches no (selected) tensor; two tensors that
/// end up with one name is left to the sink (which refuses it naming the tensor).
[[nodiscard]] result<source_ptr> select_source(source_ptr inner, const tensor_filter& filter,
                                               std::span<const rename_rule> renames = {});

/// `inner` with `edits` applied to its `__metadata__`. InvalidArgument when a key to remove
/// is absent.
[[nodiscard]] result<source_ptr> edit_metadata(source_ptr inner, const metadata_edits& edits);

/// The tensors of every input, one after another, as one source (shard several files into
/// one checkpoint). `__metadata__` is what the inputs share: kept when all carry the same,
/// else the keys whose values agree, with a warning naming the dropped keys.
[[nodiscard]] source_ptr concat_sources(std::vector<source_ptr> inputs, const warning_handler& on_warning = {});

/// The `__metadata__` every one of `all` carries (see concat_sources); the dropped keys are
/// told to `on_warning` in one message.
[[nodiscard]] std::optional<metadata_map> common_metadata(std::span<const std::optional<metadata_map>> all,
                                                          const warning_handler& on_warning);

}  // namespace safetensors::pipeline
