// SPDX-License-Identifier: Apache-2.0
// SafeTensors outputs: one file through the streaming writer, or a sharded directory
// (shards about as large as a sharded input's, else the 5GB default) with its index.
#include <filesystem>
#include <vector>

#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_write.h"
#include "safetensors/pipeline/output_check.h"
#include "safetensors/pipeline/tensor_sink.h"
#include "safetensors/writer.h"

namespace safetensors::pipeline {
namespace {

namespace st = safetensors;

std::vector<st::tensor_spec> specs_of(const tensor_source& source) {
  std::vector<st::tensor_spec> specs;
  for (const auto& t : source.tensors()) specs.push_back({t.name, t.type, t.shape});
  return specs;
}

// An impossible output (a name clash, invalid UTF-8 in a name) is a usage problem, not a broken input.
st::error as_usage(st::error e) {
  if (e.code != st::error_code::io) e.code = st::error_code::invalid_argument;
  return e;
}

class safetensors_file_sink final : public tensor_sink {
 public:
  safetensors_file_sink(std::string path, std::uint64_t alignment) : path_(std::move(path)), alignment_(alignment) {}

  st::status write(const tensor_source& source) override {
    st::write_options options;
    options.alignment = alignment_;
    options.metadata = source.metadata();
    auto plan = st::write_plan::make(specs_of(source), options);
    if (!plan) return as_usage(std::move(plan).err());
    auto writer = st::stream_writer::create(path_, std::move(plan).value());
    if (!writer) return std::move(writer).err();
    for (std::size_t i = 0; i < source.tensors().size(); ++i) {
      const std::string& name = source.tensors()[i].name;
      if (auto s = source.read(i, [&](std::span<const std::byte> chunk) { return writer->append(name, chunk); }); !s) {
        return s;
      }
    }
    if (auto s = writer->commit(); !s) return s;
    files_ = {path_};
    return {};
  }

 private:
  std::string path_;
  std::uint64_t alignment_;
};

class safetensors_directory_sink final : public tensor_sink {
 public:
  safetensors_directory_sink(std::string path, safetensors_layout layout, std::vector<std::string> inputs)
      : path_(std::move(path)), layout_(std::move(layout)), inputs_(std::move(inputs)) {}

  st::status write(const tensor_source& source) override {
    st::shard_write_options options;
    options.max_shard_bytes = layout_.max_shard_bytes > 0 ? layout_.max_shard_bytes
                              : source.shard_bytes() > 0  ? source.shard_bytes()
                                                          : st::default_max_shard_bytes;
    options.prefix = layout_.prefix;
    options.file.alignment = layout_.alignment;
    options.file.metadata = source.metadata();
    const auto specs = specs_of(source);
    if (auto plan = st::assign_shards(specs, options); !plan) return as_usage(std::move(plan).err());
    // Checks every shard file and the index against the inputs, creates the directory, and
    // removes what it created when the write fails.
    auto produce = [&](std::size_t i, const st::chunk_sink& sink) { return source.read(i, sink); };
    auto written = write_checkpoint_output(path_, specs, produce, options, inputs_);
    if (!written) return std::move(written).err();
    files_ = written->file_names;
    if (written->shards.size() > 1) files_.push_back(layout_.prefix + ".safetensors.index.json");
    return {};
  }

 private:
  std::string path_;
  safetensors_layout layout_;
  std::vector<std::string> inputs_;
};

}  // namespace

sink_ptr make_safetensors_sink(const std::string& path, bool sharded, const safetensors_layout& layout,
                               std::vector<std::string> inputs) {
  if (sharded) return std::make_unique<safetensors_directory_sink>(path, layout, std::move(inputs));
  return std::make_unique<safetensors_file_sink>(path, layout.alignment);
}

}  // namespace safetensors::pipeline
