// SPDX-License-Identifier: Apache-2.0
// Chunked copies and the progress line of the MLX subcommands.
#include "mlx_stream.h"

#include <unistd.h>

#include <algorithm>
#include <filesystem>

#include <fmt/format.h>

#include "checkpoint_input.h"
#include "command.h"
#include "report.h"

namespace st_cli {

safetensors::result<mlx_input> mlx_input::open(const std::string& path) {
  auto c = safetensors::checkpoint::open(path);
  if (!c) return std::move(c).err();
  mlx_input in;
  in.checkpoint_ = std::move(c).value();
  in.directory_output_ = in.checkpoint_.sharded() || std::filesystem::is_directory(path);
  in.anchor_ = in.checkpoint_.sharded()     ? in.checkpoint_.index_path()
               : in.directory_output_ ? in.checkpoint_.directory() + "/" + in.checkpoint_.shards()[0].name
                                      : path;
  if (!in.checkpoint_.sharded()) return in;
  // One header over all shards, so layers split across shards are still found: the
  // header a single file with every tensor would have.
  std::vector<safetensors::tensor_spec> specs;
  for (const auto& t : in.checkpoint_.tensors()) {
    specs.push_back({std::string(t.name), t.info->type, {t.info->shape.begin(), t.info->shape.end()}});
  }
  safetensors::write_options options;
  options.metadata = common_metadata(std::span(&in.checkpoint_, 1));
  auto plan = safetensors::write_plan::make(std::move(specs), options);
  if (!plan) return std::move(plan).err();
  auto h = safetensors::parse_header(plan->header_bytes().subspan(8), plan->file_size());
  if (!h) return std::move(h).err();
  in.combined_ = std::move(h).value();
  return in;
}

std::optional<safetensors::tensor_view> mlx_input::view(std::string_view name) const {
  const auto* t = checkpoint_.find(name);
  if (t == nullptr) return std::nullopt;
  return checkpoint_.file_of(*t).view(*t->info);
}

safetensors::status write_sharded(const std::string& out, const mlx_input& in,
                                  std::span<const safetensors::tensor_spec> specs,
                                  const safetensors::tensor_producer& produce, std::uint64_t max_shard_bytes,
                                  const std::optional<safetensors::metadata_map>& metadata) {
  std::error_code ec;
  std::filesystem::create_directories(out, ec);
  if (ec) {
    auto e = safetensors::make_error(safetensors::error_code::io,
                                     fmt::format("cannot create the output directory: {}", ec.message()));
    e.path = out;
    return e;
  }
  safetensors::shard_write_options options;
  options.max_shard_bytes = max_shard_bytes;
  options.file.metadata = metadata;
  options.index_metadata = in.checkpoint().index_metadata();
  options.index_metadata.erase("total_size");  // recomputed for the new tensors
  auto written = safetensors::write_checkpoint(out, specs, produce, options);
  if (!written) return std::move(written).err();
  return {};
}

safetensors::chunk_sink append_to(safetensors::stream_writer& out, std::string name) {
  return [&out, name = std::move(name)](std::span<const std::byte> chunk) { return out.append(name, chunk); };
}

safetensors::status copy_tensor(const safetensors::tensor_view& t, const safetensors::chunk_sink& sink) {
  for (std::size_t at = 0; at < t.data.size(); at += mlx_chunk_bytes) {
    const std::size_t n = std::min(mlx_chunk_bytes, t.data.size() - at);
    if (auto s = sink(t.data.subspan(at, n)); !s) return s;
  }
  return {};
}

progress_line::progress_line(std::string verb, std::size_t total)
    : verb_(std::move(verb)), total_(total), enabled_(::isatty(STDERR_FILENO) == 1) {}

void progress_line::step(std::string_view tensor) {
  ++done_;
  if (!enabled_) return;
  const std::string_view shown = tensor.size() > 60 ? tensor.substr(tensor.size() - 60) : tensor;
  fmt::print(stderr, "\r\033[K{}: {}/{} {}", verb_, done_, total_, shown);
  std::fflush(stderr);
}

progress_line::~progress_line() {
  if (enabled_ && done_ > 0) fmt::print(stderr, "\r\033[K");
}

void print_warnings(const std::string& file, const std::vector<std::string>& warnings) {
  for (const auto& w : warnings) fmt::print(stderr, "safetensors: warning: {}: {}\n", file, w);
}

std::optional<mlx_job> open_mlx_job(const std::string& in_path, const std::string& max_shard_size,
                                    bool show_warnings, int& exit_status) {
  auto in = mlx_input::open(in_path);
  if (!in) {
    exit_status = fail_with(in.err(), in_path);
    return std::nullopt;
  }
  std::uint64_t max_shard_bytes = safetensors::default_max_shard_bytes;
  if (in->directory_output()) {
    auto max = safetensors::parse_byte_size(max_shard_size);
    if (!max) {
      print_error(max.err());
      exit_status = exit_usage;
      return std::nullopt;
    }
    max_shard_bytes = *max;
  }
  auto config = safetensors::mlx::read_config_beside(in->anchor());
  if (!config) {
    exit_status = fail_with(config.err(), in_path);
    return std::nullopt;
  }
  auto info = safetensors::mlx::describe_checkpoint(in->meta(), *config ? &**config : nullptr);
  if (!info) {
    exit_status = fail_with(info.err(), in_path);
    return std::nullopt;
  }
  if (show_warnings) print_warnings(in_path, info->warnings);
  return mlx_job{std::move(in).value(), std::move(info).value(), max_shard_bytes};
}

}  // namespace st_cli
