// SPDX-License-Identifier: Apache-2.0
// `convert` from PyTorch checkpoints (.pt/.bin, zip or legacy; a sharded directory with
// pytorch_model.bin.index.json) to SafeTensors, and `inspect` of a PyTorch file. Nothing
// in the input is executed: the library's restricted unpickler only describes tensors.
#include <filesystem>
#include <map>
#include <memory>

#include <fmt/format.h>

#include "command.h"
#include "convert_read_options.h"
#include "count_text.h"
#include "foreign_formats.h"
#include "progress.h"
#include "report.h"
#include "safetensors/checkpoint.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/json_text.h"
#include "safetensors/writer.h"

namespace st_cli {
namespace {

namespace st = safetensors;

// One tensor to write, and where its bytes come from.
struct source_tensor {
  const st::torch_checkpoint* checkpoint = nullptr;
  std::size_t index = 0;
};

// Everything the inputs hold, after --shared is applied.
struct conversion {
  std::vector<std::unique_ptr<st::torch_checkpoint>> inputs;
  std::vector<st::tensor_spec> specs;
  std::vector<source_tensor> sources;
  st::metadata_map metadata{{"format", "pt"}};
  std::vector<std::string> notes;  // shared storages, skipped values: printed after writing
  std::uint64_t total_bytes = 0;
};

// --shared dedup: a tensor that is exactly the same view as an earlier one (tied weights)
// is not written; __metadata__ maps its name to the kept one, as save_model does. Other
// views of a shared storage are written as copies. --shared keep copies every tensor.
std::vector<bool> plan_shared(const st::torch_checkpoint& c, bool dedup, conversion& out) {
  const auto tensors = c.tensors();
  std::vector<bool> dropped(tensors.size(), false);
  for (const auto& group : st::shared_storage_groups(tensors)) {
    std::vector<std::string> names;
    for (std::size_t i : group) names.push_back(tensors[i].name);
    if (!dedup) {
      out.notes.push_back(fmt::format("shared storage, each written as a copy: {}", fmt::join(names, ", ")));
      continue;
    }
    for (std::size_t a = 0; a < group.size(); ++a) {
      if (dropped[group[a]]) continue;
      for (std::size_t b = a + 1; b < group.size(); ++b) {
        if (dropped[group[b]] || !st::same_view(tensors[group[a]], tensors[group[b]])) continue;
        dropped[group[b]] = true;
        out.metadata[tensors[group[b]].name] = tensors[group[a]].name;
        out.notes.push_back(fmt::format("deduplicated: {} is {} (recorded in __metadata__)", tensors[group[b]].name,
                                        tensors[group[a]].name));
      }
    }
  }
  return dropped;
}

st::status add_checkpoint(const std::string& path, const convert_args& args, conversion& out) {
  st::torch_open_options options;
  options.key = args.key;
  options.strict = args.strict;
  auto opened = st::torch_checkpoint::open(path, options);
  if (!opened) return std::move(opened).err();
  out.inputs.push_back(std::make_unique<st::torch_checkpoint>(std::move(opened).value()));
  const st::torch_checkpoint& c = *out.inputs.back();
  const auto dropped = plan_shared(c, args.shared == "dedup", out);
  for (std::size_t i = 0; i < c.tensors().size(); ++i) {
    if (dropped[i]) continue;
    const auto& t = c.tensors()[i];
    out.specs.push_back({t.name, t.type, t.shape});
    out.sources.push_back({&c, i});
    out.total_bytes += st::byte_size(t.type, t.shape).bytes;
  }
  warn_about_skipped(c.skipped());
  for (const auto& s : c.skipped()) {
    if (s.kind == st::torch_skip_kind::not_tensor) out.notes.push_back(fmt::format("skipped {}: {}", s.name, s.reason));
  }
  return {};
}

st::status write_single(const conversion& c, const std::string& out_path, progress& bar) {
  st::write_options options;
  options.metadata = c.metadata;
  auto plan = st::write_plan::make(c.specs, options);
  if (!plan) return std::move(plan).err();
  auto writer = st::stream_writer::create(out_path, std::move(plan).value());
  if (!writer) return std::move(writer).err();
  for (std::size_t i = 0; i < c.specs.size(); ++i) {
    const auto& name = c.specs[i].name;
    auto ok = c.sources[i].checkpoint->read_tensor(c.sources[i].index, [&](std::span<const std::byte> chunk) {
      bar.advance(chunk.size());
      return writer->append(name, chunk);
    });
    if (!ok) return ok;
  }
  return writer->commit();
}

// Shards about as large as the largest input shard, so the output mirrors the input.
st::status write_sharded(const conversion& c, const std::string& out_dir, std::uint64_t max_shard_bytes,
                         progress& bar) {
  std::error_code ec;
  std::filesystem::create_directories(out_dir, ec);
  if (ec) return st::make_error(st::error_code::io, "cannot create the output directory: " + ec.message());
  st::shard_write_options options;
  options.max_shard_bytes = std::max<std::uint64_t>(max_shard_bytes, 1);
  options.file.metadata = c.metadata;
  auto produce = [&](std::size_t i, const st::chunk_sink& sink) {
    return c.sources[i].checkpoint->read_tensor(c.sources[i].index, [&](std::span<const std::byte> chunk) {
      bar.advance(chunk.size());
      return sink(chunk);
    });
  };
  auto written = st::write_checkpoint(out_dir, c.specs, produce, options);
  if (!written) return std::move(written).err();
  return {};
}

void print_summary(const conversion& c, const std::string& in, const std::string& out) {
  fmt::print("converted {} ({}) from {} to {}\n", count_of(c.specs.size(), "tensor"), human_bytes(c.total_bytes), in,
             out);
  for (const auto& note : c.notes) fmt::print("  {}\n", note);
}

run_result convert_directory(const convert_args& args) {
  auto index = st::read_torch_shard_index(args.in);
  if (!index) return with_path(index.err(), args.in);
  conversion c;
  std::uint64_t largest_shard = 0;
  for (const auto& shard : index->shard_paths) {
    const std::uint64_t before = c.total_bytes;
    if (auto ok = add_checkpoint(shard, args, c); !ok) return with_path(ok.err(), shard);
    largest_shard = std::max(largest_shard, c.total_bytes - before);
  }
  // Every tensor the index names must be in its shard.
  std::map<std::string, std::string> found;
  for (const auto& s : c.sources) found.emplace(s.checkpoint->tensors()[s.index].name, s.checkpoint->path());
  for (const auto& [tensor, shard] : index->weight_map) {
    auto it = found.find(tensor);
    if (it == found.end() || it->second != shard) {
      if (args.shared == "dedup" && c.metadata.contains(tensor)) continue;
      return with_path(st::make_error(st::error_code::shard_mismatch,
                                      fmt::format("the index puts '{}' in {}, which does not hold it", tensor, shard)),
                       args.in);
    }
  }
  progress bar("convert", c.total_bytes, !args.quiet);
  if (auto ok = write_sharded(c, args.out, largest_shard, bar); !ok) return with_path(ok.err(), args.out);
  bar.finish();
  print_summary(c, args.in, args.out);
  return exit_ok;
}

}  // namespace

run_result convert_pytorch_to_safetensors(const convert_args& args) {
  std::error_code ec;
  if (std::filesystem::is_directory(args.in, ec)) return convert_directory(args);
  conversion c;
  if (auto ok = add_checkpoint(args.in, args, c); !ok) return with_path(ok.err(), args.in);
  progress bar("convert", c.total_bytes, !args.quiet);
  auto ok = std::filesystem::is_directory(args.out, ec) ? write_sharded(c, args.out, st::default_max_shard_bytes, bar)
                                                        : write_single(c, args.out, bar);
  if (!ok) return with_path(ok.err(), args.out);
  bar.finish();
  print_summary(c, args.in, args.out);
  return exit_ok;
}

run_result inspect_pytorch(const std::string& path, bool json) {
  auto c = st::torch_checkpoint::open(path);
  if (!c) return with_path(c.err(), path);
  const char* container = c->container() == st::torch_container::zip ? "zip" : "legacy";
  std::map<std::size_t, std::size_t> users;  // storage -> tensors viewing it
  for (const auto& t : c->tensors()) ++users[t.storage];
  auto shape_text = [](const std::vector<std::uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); };
  if (json) {
    std::string out =
        fmt::format(R"({{"format":"pytorch","container":"{}","big_endian":{},"tensors":[)", container, c->big_endian());
    for (std::size_t i = 0; i < c->tensors().size(); ++i) {
      const auto& t = c->tensors()[i];
      out += fmt::format(R"({}{{"name":{},"dtype":"{}","shape":{},"storage":{},"storage_offset":{},"contiguous":{}}})",
                         i ? "," : "", st::json_quote(t.name), st::dtype_name(t.type), shape_text(t.shape),
                         st::json_quote(c->storages()[t.storage].key), t.storage_offset, t.contiguous());
    }
    out += R"(],"skipped":[)";
    for (std::size_t i = 0; i < c->skipped().size(); ++i) {
      const auto& s = c->skipped()[i];
      out +=
          fmt::format(R"({}{{"name":{},"reason":{}}})", i ? "," : "", st::json_quote(s.name), st::json_quote(s.reason));
    }
    fmt::print("{}]}}\n", out);
    return exit_ok;
  }
  fmt::print("{}: PyTorch checkpoint ({} container, {}-endian), {}\n", path, container,
             c->big_endian() ? "big" : "little", count_of(c->tensors().size(), "tensor"));
  for (const auto& t : c->tensors()) {
    std::string notes;
    if (!t.contiguous()) notes += " (strided view)";
    if (users[t.storage] > 1) notes += fmt::format(" (shares storage {})", c->storages()[t.storage].key);
    fmt::print("  {}  {}  {}{}\n", t.name, st::dtype_name(t.type), shape_text(t.shape), notes);
  }
  for (const auto& s : c->skipped()) fmt::print("  skipped {}: {}\n", s.name, s.reason);
  return exit_ok;
}

}  // namespace st_cli
