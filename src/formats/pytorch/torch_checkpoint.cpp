// SPDX-License-Identifier: Apache-2.0
// checkpoint: maps the file, tells zip from legacy, unpickles the object, flattens
// it and checks every storage against the bytes the container really holds.
#include <algorithm>
#include <array>
#include <new>
#include <string_view>
#include <vector>

#include <fmt/format.h>

#include "formats/pytorch/pickle_allowlist.h"
#include "formats/pytorch/pickle_machine.h"
#include "formats/pytorch/torch_container.h"
#include "formats/pytorch/torch_legacy.h"
#include "formats/pytorch/torch_tree.h"
#include "formats/pytorch/torch_view.h"

namespace safetensors::torch {

struct checkpoint::state {
  readonly_file file;             // storages are read from it with pread; its path names the checkpoint
  detail::storage_source source;  // where each storage's bytes are
  container_kind container = container_kind::zip;
  bool big_endian = false;
  detail::torch_tree tree;
  std::vector<storage_info> storages;
  pickle_verdict verdict;
};

checkpoint::checkpoint(std::unique_ptr<state> opened) noexcept : state_(std::move(opened)) {}
checkpoint::checkpoint(checkpoint&&) noexcept = default;
checkpoint& checkpoint::operator=(checkpoint&&) noexcept = default;
checkpoint::~checkpoint() = default;

container_kind checkpoint::container() const noexcept { return state_->container; }
bool checkpoint::big_endian() const noexcept { return state_->big_endian; }
std::span<const tensor> checkpoint::tensors() const& noexcept { return state_->tree.tensors; }
std::span<const skipped_value> checkpoint::skipped() const noexcept { return state_->tree.skipped; }
std::span<const storage_info> checkpoint::storages() const noexcept { return state_->storages; }
const std::string& checkpoint::path() const noexcept { return state_->file.path(); }
const pickle_verdict& checkpoint::verdict() const noexcept { return state_->verdict; }

std::optional<std::uint64_t> checkpoint::file_offset(std::size_t index) const noexcept {
  const auto& tensors = state_->tree.tensors;
  if (index >= tensors.size()) return std::nullopt;
  const tensor& t = tensors[index];
  if (!state_->source.member[t.storage].empty()) return std::nullopt;  // compressed
  return state_->source.file_offset[t.storage] + t.storage_offset * (dtype_bits(t.type) / 8);
}

namespace {

error out_of_memory(const std::string& path, std::string_view doing) {
  return make_error(error_code::limit_exceeded, "out of memory while " + std::string(doing)).with_path(path);
}

// --strict: what weights_only refuses, wherever in the stream and whatever --key selects.
// Tensors SafeTensors cannot hold are the tree's to refuse (Unsupported, naming the tensor).
status refuse_foreign_globals(const pickle_verdict& verdict) {
  std::vector<const pickle_global_use*> foreign;
  for (const auto& g : verdict.globals) {
    if (!detail::unconvertible_tensor_global(g.name)) foreign.push_back(&g);
  }
  if (foreign.empty()) return {};
  const pickle_global_use& first = *foreign.front();
  std::string message = fmt::format("--strict: {} names a global outside the allowlist: {} at byte {}", first.pickle,
                                    first.name, first.offset);
  if (foreign.size() > 1) message += fmt::format(" (and {} more)", foreign.size() - 1);
  return make_error(error_code::unsafe_content, message + " (without --strict it would be skipped)", first.offset);
}

// Neither container: a bare pickle that names code to run is still refused as such.
bool starts_like_pickle(std::span<const std::byte> bytes) {
  return bytes.size() >= 2 && std::to_integer<unsigned char>(bytes[0]) == 0x80 &&
         std::to_integer<unsigned char>(bytes[1]) <= 5;
}

// The legacy format and a bare pickle: mapped only while parsing (the storages follow the pickles).
result<pickle_document> open_unzipped(const readonly_file& file, const std::string& path, const open_options& options,
                                      pickle_verdict& verdict, container_kind& container, bool& big_endian,
                                      detail::storage_source& source) {
  auto mapping = file.map();
  if (!mapping) return std::move(mapping).err();
  const auto bytes = mapping->bytes();
  if (detail::looks_like_legacy_checkpoint(bytes)) {
    auto legacy = detail::read_legacy_checkpoint(bytes, options.limits, verdict);
    if (!legacy) return std::move(legacy).err().with_path(path);
    container = container_kind::legacy;
    big_endian = legacy->big_endian;
    pickle_document object = std::move(legacy->object);
    source.file_offset = legacy->storage_offsets;
    source.member.assign(object.storages().size(), std::string());
    return object;
  }
  if (starts_like_pickle(bytes)) {
    const auto size = static_cast<std::size_t>(std::min<std::uint64_t>(bytes.size(), options.max_pickle_bytes));
    auto bare = detail::unpickle_into(bytes.first(size), options.limits, "the pickle", verdict);
    if (!bare && bare.err().code == error_code::code_execution) return std::move(bare).err().with_path(path);
  }
  return make_error(error_code::invalid_format,
                    "not a PyTorch checkpoint (neither a zip archive nor the legacy pickle format)", 0)
      .with_path(path);
}

}  // namespace

result<checkpoint> checkpoint::open(const std::string& path, const open_options& options) {
  pickle_verdict verdict;
  try {
    return open_checkpoint(path, options, verdict);
  } catch (const std::bad_alloc&) {
    return out_of_memory(path, "reading the checkpoint's object pickle");
  }
}

checkpoint_audit audit_checkpoint(const std::string& path, const open_options& options) {
  checkpoint_audit audit;
  try {
    auto opened = checkpoint::open_checkpoint(path, options, audit.verdict);
    if (!opened) audit.refusal = std::move(opened).err();
  } catch (const std::bad_alloc&) {
    audit.refusal = out_of_memory(path, "reading the checkpoint's object pickle");
  }
  return audit;
}

result<checkpoint> checkpoint::open_checkpoint(const std::string& path, const open_options& options,
                                               pickle_verdict& verdict) {
  auto file = readonly_file::open(path);
  if (!file) return std::move(file).err();
  const std::uint64_t file_size = file->size();
  std::array<std::byte, 4> magic{};
  const auto start = std::span(magic).first(static_cast<std::size_t>(std::min<std::uint64_t>(file_size, magic.size())));
  if (auto s = file->read_at(0, start); !s) return std::move(s).err();
  auto opened = std::unique_ptr<state>(new state{std::move(file).value(), {}, container_kind::zip, false, {}, {}, {}});

  pickle_document object;
  // A zip is read by its records, never mapped whole: describing a checkpoint of many GB (the
  // browser reads it by ranges) touches its central directory and pickles, not its storages.
  if (detail::looks_like_zip(start)) {
    auto zip = detail::open_torch_zip(file_size, path, options, verdict);
    if (!zip) return std::move(zip).err().with_path(path);
    object = std::move(zip->object);
    opened->big_endian = zip->big_endian;
    opened->source = std::move(zip->source);
  } else if (auto legacy_object = open_unzipped(opened->file, path, options, verdict, opened->container,
                                                opened->big_endian, opened->source);
             !legacy_object) {
    return std::move(legacy_object).err();
  } else {
    object = std::move(legacy_object).value();
  }

  for (const auto& s : object.storages()) opened->storages.push_back({s.key, s.element_count * s.element_bytes});
  if (options.strict) {
    if (auto ok = refuse_foreign_globals(verdict); !ok) return std::move(ok).err().with_path(path);
  }
  auto tree = detail::flatten_checkpoint(object, options.key, options.limits.max_nesting, options.strict);
  if (!tree) return std::move(tree).err().with_path(path);
  opened->tree = std::move(tree).value();
  opened->verdict = verdict;
  return checkpoint(std::move(opened));
}

status checkpoint::read_tensor(std::size_t index, const chunk_sink& sink, std::size_t chunk_bytes) const {
  const tensor& t = state_->tree.tensors.at(index);
  auto named = [&](error e) {
    e.path = state_->file.path();
    if (!e.tensor) e.tensor = t.name;
    return e;
  };
  try {
    if (auto ok = read_tensor_bytes(t, sink, std::max<std::size_t>(chunk_bytes, 64)); !ok) {
      return named(std::move(ok).err());
    }
    return {};
  } catch (const std::bad_alloc&) {
    return named(out_of_memory(state_->file.path(), "reading a tensor"));
  }
}

status checkpoint::read_tensor_bytes(const tensor& t, const chunk_sink& sink, std::size_t chunk_bytes) const {
  const state& s = *state_;
  const std::size_t swap = s.big_endian ? detail::swap_unit(t.type) : 1;
  const std::uint64_t byte_size = s.storages[t.storage].byte_size;
  std::vector<std::byte> buffer;
  if (!s.source.member[t.storage].empty()) {  // compressed: inflated whole (a few MiB at most, see torch_zip.cpp)
    if (auto ok = detail::inflate_storage(s.source, t.storage, byte_size, buffer); !ok) return ok;
    return detail::copy_view(buffer, t, swap, chunk_bytes, sink);
  }
  const std::size_t width = dtype_bits(t.type) / 8;
  const std::uint64_t count = element_count(t.shape).value_or(0);  // bounds-checked at open
  if (count == 0) return {};
  const std::uint64_t start = s.source.file_offset[t.storage] + t.storage_offset * width;
  if (t.contiguous()) {  // one run: read chunk by chunk, whole elements each time
    const std::size_t step = std::max(width, chunk_bytes / width * width);
    buffer.resize(static_cast<std::size_t>(std::min<std::uint64_t>(step, count * width)));
    for (std::uint64_t done = 0; done < count * width;) {
      const auto n = static_cast<std::size_t>(std::min<std::uint64_t>(buffer.size(), count * width - done));
      if (auto ok = s.file.read_at(start + done, std::span(buffer.data(), n)); !ok) return ok;
      detail::swap_in_place(std::span(buffer.data(), n), swap);
      if (auto ok = sink(std::span<const std::byte>(buffer.data(), n)); !ok) return ok;
      done += n;
    }
    return {};
  }
  // A strided view: read the part of the storage it spans, then gather from memory.
  std::uint64_t last = 0;
  for (std::size_t i = 0; i < t.shape.size(); ++i) last += (t.shape[i] - 1) * t.strides[i];
  buffer.resize(static_cast<std::size_t>((last + 1) * width));
  if (auto ok = s.file.read_at(start, buffer); !ok) return ok;
  tensor local = t;
  local.storage_offset = 0;
  return detail::copy_view(buffer, local, swap, chunk_bytes, sink);
}

}  // namespace safetensors::torch
