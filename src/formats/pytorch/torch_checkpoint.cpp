// SPDX-License-Identifier: Apache-2.0
// torch_checkpoint: maps the file, tells zip from legacy, unpickles the object, flattens
// it and checks every storage against the bytes the container really holds.
#include <sys/mman.h>

#include <fcntl.h>

#include "formats/pytorch/torch_container.h"
#include "formats/pytorch/torch_legacy.h"
#include "formats/pytorch/torch_tree.h"
#include "formats/pytorch/torch_view.h"
#include "platform/sys.h"

namespace safetensors {

namespace detail {

file_mapping::~file_mapping() {
  if (size_ > 0) detail::sys::current().munmap(const_cast<std::byte*>(data_), size_);
}

result<std::unique_ptr<file_mapping>> file_mapping::open(const std::string& path) {
  auto fd = detail::sys::open_file(path, O_RDONLY | O_CLOEXEC);
  if (!fd) return std::move(fd).err();
  detail::sys::unique_fd owner(*fd);
  auto size = detail::sys::file_size(*fd, path);
  if (!size) return std::move(size).err();
  auto mapping = std::unique_ptr<file_mapping>(new file_mapping());
  if (*size == 0) return mapping;
  void* p = detail::sys::current().mmap(nullptr, static_cast<std::size_t>(*size), PROT_READ, MAP_PRIVATE, *fd, 0);
  if (p == MAP_FAILED) return detail::sys::io_error("cannot map the file", errno, path);
  mapping->data_ = static_cast<const std::byte*>(p);
  mapping->size_ = static_cast<std::size_t>(*size);
  return mapping;
}

}  // namespace detail

struct torch_checkpoint::impl {
  std::string path;
  std::unique_ptr<detail::file_mapping> mapping;
  detail::torch_storage_source source;  // where each storage's bytes are
  torch_container container = torch_container::zip;
  bool big_endian = false;
  detail::torch_tree tree;
  std::vector<torch_storage> storages;
};

torch_checkpoint::torch_checkpoint(std::unique_ptr<impl> state) noexcept : impl_(std::move(state)) {}
torch_checkpoint::torch_checkpoint(torch_checkpoint&&) noexcept = default;
torch_checkpoint& torch_checkpoint::operator=(torch_checkpoint&&) noexcept = default;
torch_checkpoint::~torch_checkpoint() = default;

torch_container torch_checkpoint::container() const noexcept { return impl_->container; }
bool torch_checkpoint::big_endian() const noexcept { return impl_->big_endian; }
std::span<const torch_tensor> torch_checkpoint::tensors() const noexcept { return impl_->tree.tensors; }
std::span<const torch_skipped> torch_checkpoint::skipped() const noexcept { return impl_->tree.skipped; }
std::span<const torch_storage> torch_checkpoint::storages() const noexcept { return impl_->storages; }
const std::string& torch_checkpoint::path() const noexcept { return impl_->path; }

namespace {

error with_path(error e, const std::string& path) {
  e.path = path;
  return e;
}

}  // namespace

result<torch_checkpoint> torch_checkpoint::open(const std::string& path, const torch_open_options& options) {
  auto state = std::make_unique<impl>();
  state->path = path;
  auto mapping = detail::file_mapping::open(path);
  if (!mapping) return std::move(mapping).err();
  state->mapping = std::move(mapping).value();
  const auto bytes = state->mapping->bytes();

  pickle_document object;
  if (detail::looks_like_zip(bytes)) {
    auto zip = detail::open_torch_zip(*state->mapping, path, options);
    if (!zip) return with_path(std::move(zip).err(), path);
    object = std::move(zip->object);
    state->big_endian = zip->big_endian;
    state->source = std::move(zip->source);
  } else if (detail::looks_like_legacy_checkpoint(bytes)) {
    auto legacy = detail::read_legacy_checkpoint(bytes, options.limits);
    if (!legacy) return with_path(std::move(legacy).err(), path);
    state->container = torch_container::legacy;
    state->big_endian = legacy->big_endian;
    object = std::move(legacy->object);
    for (std::size_t i = 0; i < object.storages().size(); ++i) {
      const auto& s = object.storages()[i];
      state->source.mapped.push_back(bytes.subspan(static_cast<std::size_t>(legacy->storage_offsets[i]),
                                                   static_cast<std::size_t>(s.element_count * s.element_bytes)));
      state->source.member.emplace_back();
    }
  } else {
    return with_path(make_error(error_code::invalid_format,
                                "not a PyTorch checkpoint (neither a zip archive nor the legacy pickle format)", 0),
                     path);
  }
  for (const auto& s : object.storages()) state->storages.push_back({s.key, s.element_count * s.element_bytes});
  auto tree = detail::flatten_checkpoint(object, options.key, options.limits.max_nesting);
  if (!tree) return with_path(std::move(tree).err(), path);
  state->tree = std::move(tree).value();
  return torch_checkpoint(std::move(state));
}

status torch_checkpoint::read_tensor(std::size_t index, const std::function<status(std::span<const std::byte>)>& sink,
                                     std::size_t chunk_bytes) const {
  const torch_tensor& t = impl_->tree.tensors.at(index);
  const std::size_t swap = impl_->big_endian ? detail::swap_unit(t.type) : 1;
  std::vector<std::byte> inflated;
  auto storage = detail::storage_bytes(impl_->source, t.storage, impl_->storages[t.storage].byte_size, inflated);
  if (!storage) {
    error e = std::move(storage).err();
    e.path = impl_->path;
    e.tensor = t.name;
    return e;
  }
  return detail::copy_view(*storage, t, swap, std::max<std::size_t>(chunk_bytes, 64), sink);
}

}  // namespace safetensors
