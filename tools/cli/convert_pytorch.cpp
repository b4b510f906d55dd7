// SPDX-License-Identifier: Apache-2.0
// PyTorch checkpoints (.pt/.bin, zip or legacy; a sharded directory with
// pytorch_model.bin.index.json) as a tensor_source for `convert`, and `inspect` of a PyTorch file. Nothing
// in the input is executed: the library's restricted unpickler only describes tensors.
#include <filesystem>
#include <map>
#include <memory>
#include <numeric>

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
#include "tensor_source.h"

namespace st_cli {
namespace {

namespace st = safetensors;

// One tensor to write, and where its bytes come from.
struct tensor_origin {
  const st::torch_checkpoint* checkpoint = nullptr;
  std::size_t index = 0;
};

// Everything the inputs hold, after --shared is applied.
struct conversion {
  std::vector<std::unique_ptr<st::torch_checkpoint>> inputs;
  std::vector<st::tensor_spec> specs;
  std::vector<tensor_origin> sources;
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

st::status add_checkpoint(const std::string& path, const source_options& args, conversion& out) {
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

// The conversion as a tensor_source: tensors in the inputs' order, read from their checkpoint.
class pytorch_source final : public tensor_source {
 public:
  pytorch_source(const std::string& path, conversion c, std::uint64_t shard_bytes) : c_(std::move(c)) {
    format_ = "PyTorch";
    path_ = path;
    for (const auto& spec : c_.specs) tensors_.push_back({spec.name, spec.type, spec.shape});
    metadata_ = c_.metadata;
    notes_ = c_.notes;
    shard_bytes_ = shard_bytes;
  }

  st::status read(std::size_t index, const chunk_consumer& consume) const override {
    const tensor_origin& s = c_.sources[index];
    return s.checkpoint->read_tensor(s.index, consume);
  }

 private:
  conversion c_;
};

st::result<source_ptr> open_directory(const std::string& path, const source_options& args) {
  auto index = st::read_torch_shard_index(path);
  if (!index) return with_path(index.err(), path);
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
                       path);
    }
  }
  return source_ptr(std::make_unique<pytorch_source>(path, std::move(c), std::max<std::uint64_t>(largest_shard, 1)));
}

}  // namespace

st::result<source_ptr> open_pytorch_source(const std::string& path, const source_options& options) {
  std::error_code ec;
  // A sharded checkpoint: its directory or its index file (convert_paths.h).
  if (std::filesystem::is_directory(path, ec) || path.ends_with(".index.json")) return open_directory(path, options);
  conversion c;
  if (auto ok = add_checkpoint(path, options, c); !ok) return with_path(ok.err(), path);
  return source_ptr(std::make_unique<pytorch_source>(path, std::move(c), 0));
}

st::result<file_listing> list_pytorch(const std::string& path) {
  auto c = st::torch_checkpoint::open(path);
  if (!c) return with_path(c.err(), path);
  std::map<std::size_t, std::size_t> users;  // storage -> tensors viewing it
  for (const auto& t : c->tensors()) ++users[t.storage];
  file_listing out;
  out.format =
      fmt::format("PyTorch checkpoint ({} container, {}-endian)",
                  c->container() == st::torch_container::zip ? "zip" : "legacy", c->big_endian() ? "big" : "little");
  out.extra_title = "notes";
  for (const auto& t : c->tensors()) {
    std::vector<std::string> notes;
    if (!t.contiguous()) notes.emplace_back("strided view");
    if (users[t.storage] > 1) notes.push_back(fmt::format("shares storage {}", c->storages()[t.storage].key));
    const std::uint64_t elements =
        std::accumulate(t.shape.begin(), t.shape.end(), std::uint64_t{1}, std::multiplies<>());
    out.rows.push_back(
        {{t.name, std::string(st::dtype_name(t.type)), t.shape, st::byte_size(t.type, t.shape).bytes, elements},
         fmt::format("{}", fmt::join(notes, ", "))});
  }
  for (const auto& s : c->skipped()) out.notes.push_back(fmt::format("skipped {}: {}", s.name, s.reason));
  return out;
}

run_result inspect_pytorch(const std::string& path, bool json) {
  if (!json) {
    auto listing = list_pytorch(path);
    if (!listing) return std::move(listing).err();
    print_listing(path, *listing);
    return exit_ok;
  }
  auto c = st::torch_checkpoint::open(path);
  if (!c) return with_path(c.err(), path);
  const char* container = c->container() == st::torch_container::zip ? "zip" : "legacy";
  auto shape_text = [](const std::vector<std::uint64_t>& shape) { return fmt::format("[{}]", fmt::join(shape, ",")); };
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

}  // namespace st_cli
