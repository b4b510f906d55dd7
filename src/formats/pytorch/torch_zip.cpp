// SPDX-License-Identifier: Apache-2.0
// The zip container of torch.save (>= 1.6), read through the shared zip reader.
#include <string_view>

#include <fmt/format.h>

#include "formats/pytorch/pickle_machine.h"
#include "formats/pytorch/torch_container.h"
#include "formats/zip/zip_reader.h"

namespace safetensors::torch::detail {

using safetensors::detail::zip_entry;
using safetensors::detail::zip_reader;

bool looks_like_zip(std::span<const std::byte> file) noexcept {
  if (file.size() < 4) return false;
  auto b = [&](std::size_t i) { return std::to_integer<unsigned char>(file[i]); };
  return b(0) == 'P' && b(1) == 'K' && ((b(2) == 3 && b(3) == 4) || (b(2) == 5 && b(3) == 6));
}

namespace {

// torch.save writes every record stored; a compressed storage is accepted only while it
// is small, so a deflated zip bomb cannot make us inflate gigabytes.
constexpr std::uint64_t max_inflated_storage = std::uint64_t{64} << 20;

error invalid(std::string message) { return make_error(error_code::invalid_format, std::move(message)); }

// The folder every record sits in: torch takes it from the first entry.
result<std::string> archive_folder(const zip_reader& zip) {
  if (zip.entries().empty()) return invalid("the zip archive is empty, not a PyTorch checkpoint");
  const std::string& first = zip.entries().front().name;
  auto slash = first.find('/');
  if (slash == std::string::npos || slash == 0) {
    return invalid("the zip archive's first entry '" + first + "' is in no folder, not a PyTorch checkpoint");
  }
  return first.substr(0, slash + 1);
}

result<bool> read_byteorder(zip_reader& zip, const std::string& folder) {
  const zip_entry* entry = zip.find(folder + "byteorder");
  if (entry == nullptr) return false;  // absent: little-endian
  auto text = zip.read_all(*entry, 16);
  if (!text) return std::move(text).err();
  std::string_view order(reinterpret_cast<const char*>(text->data()), text->size());
  if (!order.empty() && order.back() == '\n') order.remove_suffix(1);
  if (order == "little") return false;
  if (order == "big") return true;
  return invalid(folder + "byteorder is '" + std::string(order.substr(0, 16)) + "', not 'little' or 'big'");
}

}  // namespace

result<torch_zip_checkpoint> open_torch_zip(std::uint64_t file_size, const std::string& path,
                                            const open_options& options, pickle_verdict& verdict) {
  auto opened = zip_reader::open(path);
  if (!opened) return std::move(opened).err();
  auto zip = std::make_shared<zip_reader>(std::move(opened).value());
  auto folder = archive_folder(*zip);
  if (!folder) return std::move(folder).err();
  if (zip->find(*folder + "constants.pkl") != nullptr) {
    return make_error(error_code::unsupported, "a TorchScript archive (constants.pkl), not a torch.save checkpoint");
  }
  const zip_entry* pickle_entry = zip->find(*folder + "data.pkl");
  if (pickle_entry == nullptr) return invalid("no " + *folder + "data.pkl in the archive");
  if (pickle_entry->uncompressed_size > options.max_pickle_bytes) {
    return make_error(error_code::limit_exceeded,
                      fmt::format("{}data.pkl has {} bytes, the limit is {}", *folder, pickle_entry->uncompressed_size,
                                  options.max_pickle_bytes));
  }
  auto pickle = zip->read_all(*pickle_entry, options.max_pickle_bytes);
  if (!pickle) return std::move(pickle).err();
  auto object = unpickle_into(*pickle, options.limits, *folder + "data.pkl", verdict);
  if (!object) {
    error e = std::move(object).err();
    if (e.code != error_code::code_execution) e.message = *folder + "data.pkl: " + e.message;  // it names the pickle
    return e;
  }
  torch_zip_checkpoint out;
  auto big = read_byteorder(*zip, *folder);
  if (!big) return std::move(big).err();
  out.big_endian = *big;
  out.object = std::move(object).value();

  for (const auto& storage : out.object.storages()) {
    const std::string name = *folder + "data/" + storage.key;
    const zip_entry* entry = zip->find(name);
    if (entry == nullptr) return invalid("storage '" + storage.key + "' has no record " + name);
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(storage.element_count, storage.element_bytes, &bytes) ||
        entry->uncompressed_size != bytes) {
      return invalid(fmt::format("{} holds {} bytes, the pickle describes {} elements of {} bytes", name,
                                 entry->uncompressed_size, storage.element_count, storage.element_bytes));
    }
    if (entry->stored) {
      auto offset = zip->stored_data_offset(*entry);
      if (!offset) return std::move(offset).err();
      if (*offset > file_size || bytes > file_size - *offset) {
        return invalid(name + " runs past the end of the file");
      }
      out.source.file_offset.push_back(*offset);
      out.source.member.emplace_back();
    } else {
      if (bytes > max_inflated_storage) {
        return make_error(error_code::unsafe_content,
                          fmt::format("{} is compressed and inflates to {} bytes; compressed storages are limited to "
                                      "{} bytes (torch.save stores them uncompressed)",
                                      name, bytes, max_inflated_storage));
      }
      out.source.file_offset.push_back(0);
      out.source.member.push_back(name);
    }
  }
  out.source.zip = std::move(zip);
  return out;
}

status inflate_storage(const storage_source& source, std::size_t index, std::uint64_t byte_size,
                       std::vector<std::byte>& buffer) {
  const zip_entry* entry = source.zip->find(source.member[index]);
  if (entry == nullptr || entry->uncompressed_size != byte_size) return invalid("storage record changed");
  buffer.resize(static_cast<std::size_t>(byte_size));
  return source.zip->read(*entry, buffer);
}

}  // namespace safetensors::torch::detail
