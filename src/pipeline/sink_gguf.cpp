// SPDX-License-Identifier: Apache-2.0
// GGUF output: unquantized tensors (F32,
// F16, BF16, F64, I8..I64) in the source's order with general.alignment 32; metadata comes
// back typed when it records GGUF types (gguf_metadata.h), else as STRING values.
#include <fmt/format.h>

#include <set>
#include <vector>

#include "safetensors/formats/gguf_metadata.h"
#include "safetensors/formats/gguf_writer.h"
#include "safetensors/pipeline/tensor_sink.h"
#include "safetensors/sha256.h"

namespace safetensors::pipeline {
namespace {

namespace gguf = safetensors::gguf;
using safetensors::error_code;
using safetensors::make_error;

constexpr std::size_t gguf_max_name = 63;
constexpr std::size_t hash_chars = 8;

/// A name of at most 63 bytes: the longest prefix that ends on a UTF-8 character boundary
/// and fits with "~" and 8 hex digits of the full name's SHA-256.
safetensors::result<std::string> hashed_name(std::string_view name) {
  auto hasher = safetensors::sha256_hasher::create();
  if (!hasher) return std::move(hasher).err();
  hasher->update(std::as_bytes(std::span(name)));
  const std::string hex = safetensors::to_hex(hasher->finish()).substr(0, hash_chars);
  std::size_t keep = gguf_max_name - 1 - hash_chars;
  while (keep > 0 && (static_cast<unsigned char>(name[keep]) & 0xC0U) == 0x80U) --keep;  // not mid-character
  return std::string(name.substr(0, keep)) + "~" + hex;
}

struct renames {
  std::vector<std::string> from;
  std::vector<std::string> to;
};

/// GGUF names for every tensor; over-long ones are an error unless `hash_long_names`.
safetensors::result<std::vector<std::string>> gguf_names(const tensor_source& source, bool hash_long_names,
                                                         renames& renamed) {
  std::vector<std::string> names;
  std::set<std::string, std::less<>> taken;
  for (const auto& t : source.tensors()) taken.emplace(t.name);
  for (const auto& t : source.tensors()) {
    if (t.name.size() <= gguf_max_name) {
      names.emplace_back(t.name);
      continue;
    }
    if (!hash_long_names) {
      return make_error(
          error_code::invalid_argument,
          fmt::format("tensor name is {} bytes, GGUF allows {} (hashing long names shortens it: --rename-long hash)",
                      t.name.size(), gguf_max_name),
          std::nullopt, t.name);
    }
    auto short_name = hashed_name(t.name);
    if (!short_name) return std::move(short_name).err();
    if (!taken.insert(*short_name).second) {
      return make_error(error_code::invalid_argument, "shortened name '" + *short_name + "' is already taken",
                        std::nullopt, t.name);
    }
    renamed.from.emplace_back(t.name);
    renamed.to.push_back(*short_name);
    names.push_back(std::move(short_name).value());
  }
  return names;
}

gguf::metadata_entry string_array(std::string key, std::vector<std::string> items) {
  gguf::array_value a;
  a.element_type = gguf::value_type::string;
  a.strings = std::move(items);
  return {std::move(key), gguf::value(std::in_place_index<9>, std::move(a))};
}

safetensors::result<gguf::write_plan> plan_output(const tensor_source& source, bool hash_long_names) {
  renames renamed;
  auto names = gguf_names(source, hash_long_names, renamed);
  if (!names) return std::move(names).err();
  std::vector<gguf::tensor_spec> specs;
  std::size_t i = 0;
  for (const auto& t : source.tensors()) {
    const auto type = gguf::ggml_type_for(t.type);
    if (!type) {
      return make_error(error_code::invalid_argument,
                        fmt::format("dtype {} has no GGUF equivalent (GGUF takes F32, F16, BF16, F64, I8, I16, I32, "
                                    "I64; --dtype F32 casts floats)",
                                    safetensors::dtype_name(t.type)),
                        std::nullopt, t.name);
    }
    specs.push_back({(*names)[i++], *type, t.shape});
  }
  std::vector<gguf::metadata_entry> metadata;
  if (source.metadata()) {
    auto typed = gguf::from_safetensors_metadata(*source.metadata());
    if (!typed) return std::move(typed).err();
    metadata = std::move(typed).value();
  }
  if (!renamed.from.empty()) {
    metadata.push_back(string_array("safetensors.renamed.from", std::move(renamed.from)));
    metadata.push_back(string_array("safetensors.renamed.to", std::move(renamed.to)));
  }
  return gguf::write_plan::make(std::move(metadata), std::move(specs), 32);
}

class gguf_sink final : public tensor_sink {
 public:
  gguf_sink(std::string path, bool hash_long_names) : path_(std::move(path)), hash_long_names_(hash_long_names) {}

  safetensors::status write(const tensor_source& source) override {
    auto plan = plan_output(source, hash_long_names_);
    if (!plan) {
      safetensors::error e = std::move(plan).err();
      if (e.code != error_code::invalid_argument) e.code = error_code::invalid_argument;
      return e;
    }
    auto out = gguf::stream_writer::create(path_, std::move(plan).value());
    if (!out) return std::move(out).err();
    for (std::size_t i = 0; i < source.tensors().size(); ++i) {
      if (auto s = source.read(i, [&](std::span<const std::byte> chunk) { return out->append(i, chunk); }); !s) {
        return s;
      }
    }
    return out->commit();
  }

 private:
  std::string path_;
  bool hash_long_names_;
};

}  // namespace

sink_ptr make_gguf_sink(const std::string& path, bool hash_long_names) {
  return std::make_unique<gguf_sink>(path, hash_long_names);
}

}  // namespace safetensors::pipeline
