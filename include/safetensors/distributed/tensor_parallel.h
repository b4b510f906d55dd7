// SPDX-License-Identifier: Apache-2.0
/// \file distributed/tensor_parallel.h
/// Tensor-parallel loading: a plan says how each tensor of a checkpoint is split across the
/// ranks of a job, and each rank reads only its part, from a local or a remote checkpoint
/// (any `checkpoint`, e.g. from `remote::open_checkpoint`).
///
/// A plan is a JSON object of rules, tried in order; the first rule whose pattern is the
/// tensor's name or matches it as a glob (glob.h) decides, and a tensor no rule matches is
/// replicated:
///
///     {"*.q_proj.weight": {"split": "column"},      // Megatron/vLLM ColumnParallelLinear
///      "*.o_proj.weight": {"split": "row"},         // RowParallelLinear
///      "*.embed_tokens.weight": {"split": "column", "dim": 0},
///      "*.norm.weight": "replicate"}                // a bare string is {"split": ...}
///
/// `column` splits dimension 0 by default (the output features of a `[out, in]` weight),
/// `row` dimension 1 (the input features); `dim` chooses another, negative counting from the
/// end. Rank r of W gets the r-th of W equal parts, as `torch.chunk(t, W, dim)[r]`; a
/// dimension W does not divide is an error, as in Megatron and vLLM.
///
/// Example:
///
///     auto plan = safetensors::parse_tp_plan(R"({"*.weight": {"split": "column"}})");
///     auto c = safetensors::checkpoint::open("model/");
///     auto mine = safetensors::plan_tp_rank(*c, *plan, rank, world_size);
///     auto tensors = safetensors::load_tp_rank(*mine);  // rank's parts, sorted by name
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/error.h"
#include "safetensors/header.h"
#include "safetensors/loader.h"
#include "safetensors/slice.h"

namespace safetensors {

/// How a tensor is divided among the ranks.
enum class tp_split : std::uint8_t {
  column,     ///< along `dim` (default 0)
  row,        ///< along `dim` (default 1)
  replicate,  ///< every rank reads the whole tensor
};

/// "column", "row" or "replicate".
[[nodiscard]] std::string_view tp_split_name(tp_split split) noexcept;

struct tp_rule {
  std::string pattern;  ///< the exact name, or a glob (name_matches)
  tp_split split = tp_split::replicate;
  std::optional<std::int64_t> dim;  ///< nullopt: column 0, row 1; negative counts from the end
};

struct tp_plan {
  std::vector<tp_rule> rules;  ///< first match wins
};

/// Parses a plan (a JSON object, see above). Errors: InvalidArgument naming the rule and
/// what is wrong (not an object, unknown split, unknown key, dim not an integer, dim with
/// replicate, empty pattern); DuplicateKey.
[[nodiscard]] result<tp_plan> parse_tp_plan(std::string_view json);

/// Where one tensor goes: which rule (null: none matched), the split and the dimension.
struct tp_placement {
  const tp_rule* rule = nullptr;
  tp_split split = tp_split::replicate;
  std::size_t dim = 0;  ///< resolved, non-negative; 0 when replicated
};

/// The placement of `tensor` over `world_size` ranks. Errors: InvalidArgument naming the
/// tensor and the rule: dim out of range for the tensor's rank, a dimension `world_size`
/// does not divide, world_size 0.
[[nodiscard]] result<tp_placement> place_tensor(const tp_plan& plan, const tensor_info& tensor,
                                                std::uint64_t world_size);

/// One tensor as one rank reads it.
struct tp_tensor {
  const tensor_location* location = nullptr;  ///< in the checkpoint
  const file* source = nullptr;
  tp_placement placement;
  slice_plan part;  ///< the rank's part: output shape and file ranges
};

/// What one rank reads. Points into the checkpoint and the plan: valid while both live.
struct tp_rank_plan {
  std::uint64_t rank = 0;
  std::uint64_t world_size = 1;
  std::vector<tp_tensor> tensors;      ///< every tensor of the checkpoint, sorted by name
  std::uint64_t bytes = 0;             ///< tensor bytes this rank reads (sum of the parts)
  std::uint64_t split_bytes = 0;       ///< ... of them, of split tensors
  std::uint64_t split_full_bytes = 0;  ///< whole size of the split tensors (what every rank would read)
};

/// Plans `rank`'s reads. No I/O; every rank of a job gets the same errors, before anything
/// is read. Errors: InvalidArgument (rank >= world_size, world_size 0, place_tensor's),
/// MisalignedSlice (a split of a sub-byte dtype not on a byte), LimitExceeded.
[[nodiscard]] result<tp_rank_plan> plan_tp_rank(const checkpoint& c, const tp_plan& plan, std::uint64_t rank,
                                                std::uint64_t world_size);

/// Reads every planned part into `destinations` (one per `plan.tensors`, each exactly its
/// `part.byte_size`) with load(): parallel, one read per run of contiguous bytes.
[[nodiscard]] status load_tp_rank(const tp_rank_plan& plan, std::span<const std::span<std::byte>> destinations,
                                  const load_options& options = {});

/// The same into memory the library allocates; names, dtypes and the parts' shapes.
[[nodiscard]] result<std::vector<loaded_tensor>> load_tp_rank(const tp_rank_plan& plan,
                                                              const load_options& options = {});

}  // namespace safetensors
