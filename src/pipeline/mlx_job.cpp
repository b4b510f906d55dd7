// SPDX-License-Identifier: Apache-2.0
#include "mlx_job.h"

#include <filesystem>

#include <fmt/format.h>

#include "safetensors/checkpoint_write.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/pipeline/selection.h"

namespace safetensors::pipeline::detail {

result<mlx_input> mlx_input::make(checkpoint c, const std::string& path, const warning_handler& on_warning) {
  mlx_input in;
  in.checkpoint_ = std::move(c);
  std::error_code ec;
  in.directory_output_ = in.checkpoint_.sharded() || std::filesystem::is_directory(path, ec);
  in.anchor_ = in.checkpoint_.sharded() ? in.checkpoint_.index_path()
               : in.directory_output_   ? in.checkpoint_.directory() + "/" + in.checkpoint_.shards()[0].name
                                        : path;
  if (!in.checkpoint_.sharded()) return in;
  // One header over all shards, so layers split across shards are still found: the
  // header a single file with every tensor would have.
  std::vector<tensor_spec> specs;
  for (const auto& t : in.checkpoint_.tensors()) {
    specs.push_back({std::string(t.name), t.info->type, {t.info->shape.begin(), t.info->shape.end()}});
  }
  std::vector<std::optional<metadata_map>> all;
  for (const auto& shard : in.checkpoint_.shards()) all.push_back(shard.file.header().metadata());
  write_options write;
  write.metadata = common_metadata(all, on_warning);
  auto plan = write_plan::make(std::move(specs), write);
  if (!plan) return std::move(plan).err();
  auto h = parse_header(plan->header_bytes().subspan(8), plan->file_size());
  if (!h) return std::move(h).err();
  in.combined_ = std::move(h).value();
  return in;
}

namespace {

error not_found(std::string_view name) {
  return make_error(error_code::tensor_not_found, fmt::format("tensor '{}' not found", name), std::nullopt,
                    std::string(name));
}

}  // namespace

status mlx_input::read(std::string_view name, std::uint64_t offset, std::span<std::byte> destination) const {
  const auto* t = checkpoint_.find(name);
  if (t == nullptr) return not_found(name);
  const file& f = checkpoint_.file_of(*t);
  if (offset + destination.size() > t->info->byte_size()) {
    return make_error(error_code::invalid_argument, fmt::format("read past the end of tensor '{}'", name), std::nullopt,
                      std::string(name));
  }
  if (auto s = f.read_range(f.header().data_start() + t->info->begin + offset, destination); !s) {
    error e = std::move(s).err();
    if (!e.tensor) e.tensor = std::string(name);
    return e;
  }
  return {};
}

status mlx_input::copy(std::string_view name, const chunk_sink& sink) const {
  const auto* t = checkpoint_.find(name);
  if (t == nullptr) return not_found(name);
  std::vector<std::byte> buffer;
  return read_tensor_chunks(checkpoint_.file_of(*t), *t->info, buffer, sink);
}

result<mlx_job> open_mlx_job(checkpoint c, const std::string& path, const warning_handler& on_warning) {
  std::vector<std::string> warnings;
  const warning_handler keep = [&](std::string_view w) {
    warnings.emplace_back(w);
    if (on_warning) on_warning(w);
  };
  auto in = mlx_input::make(std::move(c), path, keep);
  if (!in) return std::move(in).err().with_path(path);
  auto config = mlx::read_config_beside(in->anchor());
  if (!config) return std::move(config).err().with_path(path);
  auto info = mlx::describe_checkpoint(in->header(), *config ? &**config : nullptr);
  if (!info) return std::move(info).err().with_path(path);
  for (const auto& w : info->warnings) keep(fmt::format("{}: {}", path, w));
  return mlx_job{std::move(in).value(), std::move(info).value(), std::move(warnings)};
}

status write_sharded(const std::string& out, const mlx_input& in, std::span<const tensor_spec> specs,
                     const tensor_producer& produce, std::uint64_t max_shard_bytes,
                     const std::optional<metadata_map>& metadata) {
  shard_write_options options;
  options.max_shard_bytes = max_shard_bytes;
  options.file.metadata = metadata;
  options.index_metadata = in.source().index_metadata();
  options.index_metadata.erase("total_size");  // recomputed for the new tensors
  auto written = write_checkpoint_output(out, specs, produce, options, input_files(in.source()));
  if (!written) return std::move(written).err();
  return {};
}

status byte_progress::advance(std::uint64_t bytes) {
  done_ += bytes;
  if (progress_ && !progress_(done_, total_)) return make_error(error_code::cancelled, "cancelled");
  return {};
}

chunk_sink append_to(stream_writer& out, std::string name) {
  return [&out, name = std::move(name)](std::span<const std::byte> chunk) { return out.append(name, chunk); };
}

status check_budget(const mlx_input& in, std::span<const tensor_spec> specs, std::uint64_t max_output_bytes,
                    const std::string& out) {
  std::uint64_t input = 0;
  for (const auto& shard : in.source().shards()) input += shard.file.file_size();
  std::uint64_t planned = 0;
  for (const auto& spec : specs) planned += byte_size(spec.type, spec.shape).bytes;
  if (auto s = check_output_budget(planned, input, max_output_bytes); !s) return std::move(s).err().with_path(out);
  return {};
}

}  // namespace safetensors::pipeline::detail
