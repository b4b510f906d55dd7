// SPDX-License-Identifier: Apache-2.0
#include "rewrite.h"

#include "input.h"
#include "progress.h"
#include "safetensors/pipeline/chunk_cast.h"
#include "safetensors/pipeline/output_check.h"
#include "values.h"

namespace st_cli {

using safetensors::pipeline::check_output;
namespace {

safetensors::error in_file(safetensors::error e, const std::string& path, std::string_view tensor) {
  if (e.path.empty()) e.path = path;
  if (!e.tensor) e.tensor = std::string(tensor);
  return e;
}

}  // namespace

safetensors::status write_rewritten(const std::string& out_path, std::span<const std::string> inputs, in_place rule,
                                    const std::vector<output_tensor>& tensors,
                                    const safetensors::write_options& options, bool show_progress,
                                    const std::string& label, const safetensors::encode_options& encode) {
  if (auto s = check_output(out_path, inputs, rule); !s) return s;
  std::vector<safetensors::tensor_spec> specs;
  std::uint64_t total = 0;
  for (const auto& t : tensors) {
    specs.push_back({t.name, t.type, std::vector<std::uint64_t>(t.source->shape.begin(), t.source->shape.end())});
    total += t.source->byte_size();
  }
  auto plan = safetensors::write_plan::make(std::move(specs), options);
  if (!plan) {
    // The user asked for an impossible output (a name clash, F4 with an odd count, ...):
    // a usage problem, not a broken input file.
    safetensors::error e = std::move(plan).err();
    e.code = safetensors::error_code::invalid_argument;
    if (e.path.empty()) e.path = out_path;
    return e;
  }
  auto writer = safetensors::stream_writer::create(out_path, std::move(plan).value());
  if (!writer) return std::move(writer).err();

  progress bar(label, total, show_progress);
  std::vector<std::byte> buffer;
  std::vector<std::byte> converted;
  safetensors::pipeline::chunk_caster caster;
  // Input file order: the reads are sequential whatever order the writer lays tensors out in.
  for (const auto& t : tensors) {
    const safetensors::dtype from = t.source->type;
    const bool convert = from != t.type;
    auto s = read_tensor_chunks(
        *t.file, *t.source, buffer,
        [&](std::span<const std::byte> chunk) -> safetensors::status {
          if (convert) {
            if (auto c = caster.cast(from, t.type, chunk, converted, encode); !c) {
              return in_file(std::move(c).err(), t.file->path(), t.source->name);
            }
            if (auto a = writer->append(t.name, converted); !a) return a;
          } else if (auto a = writer->append(t.name, chunk); !a) {
            return a;
          }
          bar.advance(chunk.size());
          return {};
        },
        convert ? element_chunk_bytes(from) : chunk_bytes);
    if (!s) return s;  // the writer's destructor removes the temporary file
  }
  bar.finish();
  return writer->commit();
}

}  // namespace st_cli
