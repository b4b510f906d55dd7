// SPDX-License-Identifier: Apache-2.0
// The MLX subcommands' input, read in chunks.
#include "mlx_stream.h"

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "input.h"
#include "remote_input.h"
#include "report.h"
#include "safetensors/pipeline/output_check.h"

namespace st_cli {

using safetensors::pipeline::input_files;
using safetensors::pipeline::write_checkpoint_output;

safetensors::result<mlx_input> mlx_input::open(const std::string& path) {
  safetensors::checkpoint_options options;
  options.shard.backend = safetensors::io_backend::pread;  // nothing mapped: bounded memory
  auto c = open_checkpoint_at(path, options);
  if (!c) return std::move(c).err();
  mlx_input in;
  in.checkpoint_ = std::move(c).value();
  in.directory_output_ = in.checkpoint_.sharded() || std::filesystem::is_directory(path);
  in.anchor_ = in.checkpoint_.sharded() ? in.checkpoint_.index_path()
               : in.directory_output_   ? in.checkpoint_.directory() + "/" + in.checkpoint_.shards()[0].name
                                        : path;
  if (!in.checkpoint_.sharded()) return in;
  // One header over all shards, so layers split across shards are still found: the
  // header a single file with every tensor would have.
  std::vector<safetensors::tensor_spec> specs;
  for (const auto& t : in.checkpoint_.tensors()) {
    specs.push_back({std::string(t.name), t.info->type, {t.info->shape.begin(), t.info->shape.end()}});
  }
  safetensors::write_options write;
  write.metadata = common_metadata(in.checkpoint_);
  auto plan = safetensors::write_plan::make(std::move(specs), write);
  if (!plan) return std::move(plan).err();
  auto h = safetensors::parse_header(plan->header_bytes().subspan(8), plan->file_size());
  if (!h) return std::move(h).err();
  in.combined_ = std::move(h).value();
  return in;
}

safetensors::status mlx_input::read(std::string_view name, std::uint64_t offset,
                                    std::span<std::byte> destination) const {
  const auto* t = checkpoint_.find(name);
  if (t == nullptr) {
    return safetensors::make_error(safetensors::error_code::tensor_not_found,
                                   fmt::format("tensor '{}' not found", name), std::nullopt, std::string(name));
  }
  const safetensors::file& f = checkpoint_.file_of(*t);
  if (offset + destination.size() > t->info->byte_size()) {
    return safetensors::make_error(safetensors::error_code::invalid_argument,
                                   fmt::format("read past the end of tensor '{}'", name), std::nullopt,
                                   std::string(name));
  }
  auto s = f.read_range(f.meta().data_start() + t->info->begin + offset, destination);
  if (!s) {
    safetensors::error e = std::move(s).err();
    if (!e.tensor) e.tensor = std::string(name);
    return e;
  }
  return {};
}

safetensors::status mlx_input::copy(std::string_view name, const safetensors::chunk_sink& sink) const {
  const auto* t = checkpoint_.find(name);
  if (t == nullptr) {
    return safetensors::make_error(safetensors::error_code::tensor_not_found,
                                   fmt::format("tensor '{}' not found", name), std::nullopt, std::string(name));
  }
  std::vector<std::byte> buffer;
  return read_tensor_chunks(checkpoint_.file_of(*t), *t->info, buffer, sink);
}

safetensors::status write_sharded(const std::string& out, const mlx_input& in,
                                  std::span<const safetensors::tensor_spec> specs,
                                  const safetensors::tensor_producer& produce, std::uint64_t max_shard_bytes,
                                  const std::optional<safetensors::metadata_map>& metadata) {
  safetensors::shard_write_options options;
  options.max_shard_bytes = max_shard_bytes;
  options.file.metadata = metadata;
  options.index_metadata = in.checkpoint().index_metadata();
  options.index_metadata.erase("total_size");  // recomputed for the new tensors
  auto written = write_checkpoint_output(out, specs, produce, options, input_files(in.checkpoint()));
  if (!written) return std::move(written).err();
  return {};
}

safetensors::chunk_sink append_to(safetensors::stream_writer& out, std::string name) {
  return [&out, name = std::move(name)](std::span<const std::byte> chunk) { return out.append(name, chunk); };
}

void print_warnings(const std::string& file, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) print_warning(fmt::format("{}: {}", file, w));
}

safetensors::result<mlx_job> open_mlx_job(const std::string& in_path, const std::string& max_shard_size,
                                          bool show_warnings) {
  auto in = mlx_input::open(in_path);
  if (!in) return with_path(std::move(in).err(), in_path);
  std::uint64_t max_shard_bytes = safetensors::default_max_shard_bytes;
  if (in->directory_output()) {
    auto max = safetensors::parse_byte_size(max_shard_size);
    if (!max) return std::move(max).err();
    max_shard_bytes = *max;
  }
  auto config = safetensors::mlx::read_config_beside(in->anchor());
  if (!config) return with_path(std::move(config).err(), in_path);
  auto info = safetensors::mlx::describe_checkpoint(in->meta(), *config ? &**config : nullptr);
  if (!info) return with_path(std::move(info).err(), in_path);
  if (show_warnings) print_warnings(in_path, info->warnings);
  return mlx_job{std::move(in).value(), std::move(info).value(), max_shard_bytes};
}

}  // namespace st_cli
