// SPDX-License-Identifier: Apache-2.0
// Tensor-parallel planning: a rule per tensor, the rank's part as a slice plan, and the
// parts read with the parallel loader.
#include <algorithm>
#include <memory>

#include <fmt/format.h>

#include "safetensors/distributed/tensor_parallel.h"
#include "safetensors/glob.h"

namespace safetensors {
namespace {

error placement_error(const tensor_info& tensor, std::string message) {
  return make_error(error_code::invalid_argument, "tensor-parallel plan: " + std::move(message), std::nullopt,
                    std::string(tensor.name));
}

std::string shape_text(std::span<const std::uint64_t> shape) { return fmt::format("[{}]", fmt::join(shape, ", ")); }

}  // namespace

result<tp_placement> place_tensor(const tp_plan& plan, const tensor_info& tensor, std::uint64_t world_size) {
  if (world_size == 0) return placement_error(tensor, "world size 0");
  tp_placement out;
  const auto match = std::find_if(plan.rules.begin(), plan.rules.end(),
                                  [&](const tp_rule& r) { return name_matches(r.pattern, tensor.name); });
  if (match == plan.rules.end()) return out;  // replicated
  out.rule = &*match;
  out.split = match->split;
  if (out.split == tp_split::replicate) return out;
  const auto rank = static_cast<std::int64_t>(tensor.shape.size());
  std::int64_t dim = match->dim.value_or(out.split == tp_split::column ? 0 : 1);
  const std::int64_t given = dim;
  if (dim < 0) dim += rank;
  if (dim < 0 || dim >= rank) {
    return placement_error(tensor, fmt::format("rule '{}' ({} split) needs dim {}, but tensor '{}' of shape {} has {} "
                                               "dimension{}",
                                               match->pattern, tp_split_name(out.split), given, tensor.name,
                                               shape_text(tensor.shape), rank, rank == 1 ? "" : "s"));
  }
  out.dim = static_cast<std::size_t>(dim);
  const std::uint64_t size = tensor.shape[out.dim];
  if (size % world_size != 0) {
    return placement_error(tensor, fmt::format("rule '{}' ({} split) splits dim {} of tensor '{}' (shape {}): {} "
                                               "does not divide evenly over {} ranks",
                                               match->pattern, tp_split_name(out.split), out.dim, tensor.name,
                                               shape_text(tensor.shape), size, world_size));
  }
  return out;
}

result<tp_rank_plan> plan_tp_rank(const checkpoint& c, const tp_plan& plan, std::uint64_t rank,
                                  std::uint64_t world_size) {
  if (world_size == 0 || rank >= world_size) {
    return make_error(error_code::invalid_argument,
                      fmt::format("tensor-parallel plan: rank {} is not in a world of size {}", rank, world_size));
  }
  tp_rank_plan out;
  out.rank = rank;
  out.world_size = world_size;
  out.tensors.reserve(c.tensors().size());
  for (const tensor_location& loc : c.tensors()) {
    const file& f = c.file_of(loc);
    auto placement = place_tensor(plan, *loc.info, world_size);
    if (!placement) {
      return std::move(placement).err().with_path(f.path());
    }
    const std::uint64_t data_start = f.header().data_start();
    auto part = placement->split == tp_split::replicate
                    ? plan_slice(*loc.info, data_start, {})
                    : plan_tensor_parallel(*loc.info, data_start, placement->dim, rank, world_size);
    if (!part) {
      return std::move(part).err().with_path(f.path());
    }
    out.bytes += part->byte_size;
    if (placement->split != tp_split::replicate) {
      out.split_bytes += part->byte_size;
      out.split_full_bytes += loc.info->byte_size();
    }
    out.tensors.push_back({&loc, &f, *placement, std::move(part).value()});
  }
  return out;
}

status load_tp_rank(const tp_rank_plan& plan, std::span<const std::span<std::byte>> destinations,
                    const load_options& options) {
  if (destinations.size() != plan.tensors.size()) {
    return make_error(error_code::invalid_argument,
                      fmt::format("{} destinations for {} planned tensors", destinations.size(), plan.tensors.size()));
  }
  std::vector<load_request> requests;
  requests.reserve(plan.tensors.size());
  for (std::size_t i = 0; i < plan.tensors.size(); ++i) {
    const tp_tensor& t = plan.tensors[i];
    if (t.part.byte_size == 0 && destinations[i].empty()) continue;  // nothing to read
    requests.push_back({t.source, t.location->info, &t.part, destinations[i]});
  }
  return load(requests, options);
}

result<std::vector<loaded_tensor>> load_tp_rank(const tp_rank_plan& plan, const load_options& options) {
  std::vector<loaded_tensor> out;
  std::vector<std::span<std::byte>> destinations;
  out.reserve(plan.tensors.size());
  destinations.reserve(plan.tensors.size());
  for (const tp_tensor& t : plan.tensors) {
    loaded_tensor l;
    l.name = std::string(t.location->name);
    l.type = t.part.type;
    l.shape = t.part.shape;
    l.size = static_cast<std::size_t>(t.part.byte_size);
    l.storage = allocate_tensor_storage(l.size);
    destinations.emplace_back(l.storage.get(), l.size);
    out.push_back(std::move(l));
  }
  if (auto s = load_tp_rank(plan, destinations, options); !s) return std::move(s).err();
  return out;
}

}  // namespace safetensors
