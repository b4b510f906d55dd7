// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include "formats/pytorch/pickle_machine.h"
#include "formats/pytorch/torch_legacy.h"

#include <algorithm>
#include <new>
#include <string_view>
#include <unordered_map>

namespace safetensors::torch::detail {
namespace {

// The first pickle holds the magic number 0x1950a86a20f9469cfc6c: LONG1 in protocols 2-5
// (after a FRAME in 4-5), decimal text LONG in protocol 1. It is a few dozen bytes.
constexpr std::string_view legacy_magic_hex = "1950a86a20f9469cfc6c";
constexpr std::size_t magic_pickle_max_bytes = 64;

// Unpickles the pickle at `offset`; errors get file offsets.
result<pickle_document> pickle_at(std::span<const std::byte> file, std::uint64_t offset, const pickle_limits& limits,
                                  const char* what, pickle_verdict& verdict) {
  auto doc = unpickle_into(file.subspan(static_cast<std::size_t>(offset)), limits,
                           fmt::format("the {} pickle, which starts at file byte {}", what, offset), verdict);
  if (!doc) {
    error e = std::move(doc).err();
    // A code-execution refusal already names the pickle.
    if (e.code != error_code::code_execution) {
      e.message = fmt::format("{} pickle (starting at file byte {}): {}", what, offset, e.message);
    }
    if (e.offset) *e.offset += offset;
    return e;
  }
  return doc;
}

const pickle_value* dict_get(const pickle_value& dict, std::string_view key) {
  if (dict.kind != pickle_kind::dict) return nullptr;
  for (std::size_t i = 0; i + 1 < dict.items.size(); i += 2) {
    if (dict.items[i]->kind == pickle_kind::string && dict.items[i]->text == key) return dict.items[i + 1];
  }
  return nullptr;
}

}  // namespace

bool looks_like_legacy_checkpoint(std::span<const std::byte> file) noexcept {
  pickle_limits tiny;
  tiny.max_memo = 8;
  tiny.max_stack = 8;
  tiny.max_string = 32;
  tiny.max_container = 8;
  tiny.max_values = 8;
  try {
    auto magic = unpickle(file.first(std::min(file.size(), magic_pickle_max_bytes)), tiny);
    // A pickle that starts by naming code to run is read on, so that it is refused as such.
    if (!magic) return magic.err().code == error_code::code_execution;
    return magic->root().kind == pickle_kind::big_integer && magic->root().text == legacy_magic_hex;
  } catch (const std::bad_alloc&) {
    return false;
  }
}

result<legacy_checkpoint> read_legacy_checkpoint(std::span<const std::byte> file, const pickle_limits& limits,
                                                 pickle_verdict& verdict) {
  auto bad = [](std::string why, std::uint64_t at) {
    return make_error(error_code::invalid_format, std::move(why), at);
  };
  if (!looks_like_legacy_checkpoint(file)) return bad("not a legacy torch checkpoint (magic number missing)", 0);
  std::uint64_t pos = 0;
  auto magic = pickle_at(file, pos, limits, "magic number", verdict);
  if (!magic) return std::move(magic).err();
  pos += magic->end_offset();
  auto protocol = pickle_at(file, pos, limits, "protocol version", verdict);
  if (!protocol) return std::move(protocol).err();
  if (protocol->root().kind != pickle_kind::integer || protocol->root().integer != 1001) {
    return make_error(error_code::unsupported, "legacy protocol version is not 1001", pos);
  }
  pos += protocol->end_offset();
  auto sys_info = pickle_at(file, pos, limits, "sys_info", verdict);
  if (!sys_info) return std::move(sys_info).err();
  const pickle_value* little = dict_get(sys_info->root(), "little_endian");
  if (little == nullptr || little->kind != pickle_kind::boolean) return bad("sys_info lacks little_endian", pos);
  pos += sys_info->end_offset();

  legacy_checkpoint out;
  out.big_endian = little->integer == 0;
  auto object = pickle_at(file, pos, limits, "object", verdict);
  if (!object) return std::move(object).err();
  pos += object->end_offset();
  out.object = std::move(object).value();
  auto keys = pickle_at(file, pos, limits, "storage keys", verdict);
  if (!keys) return std::move(keys).err();
  pos += keys->end_offset();
  if (keys->root().kind != pickle_kind::list) return bad("storage keys are not a list", pos);

  const auto storages = out.object.storages();
  std::unordered_map<std::string, std::size_t> by_key;
  for (std::size_t i = 0; i < storages.size(); ++i) by_key.emplace(storages[i].key, i);
  out.storage_offsets.assign(storages.size(), 0);
  std::vector<bool> seen(storages.size(), false);
  for (const pickle_value* key : keys->root().items) {
    auto it = key->kind == pickle_kind::string ? by_key.find(key->text) : by_key.end();
    if (it == by_key.end()) return bad("storage key list names a storage the object does not use", pos);
    const auto& s = storages[it->second];
    if (seen[it->second]) return bad("storage '" + s.key + "' listed twice", pos);
    seen[it->second] = true;
    if (file.size() - pos < 8) return bad("file ends in the header of storage '" + s.key + "'", pos);
    std::uint64_t count = 0;
    for (int b = 0; b < 8; ++b) {
      auto byte = std::to_integer<std::uint64_t>(file[static_cast<std::size_t>(pos) + static_cast<std::size_t>(b)]);
      count |= out.big_endian ? byte << (8 * (7 - b)) : byte << (8 * b);
    }
    if (count != s.element_count) {
      return bad(fmt::format("storage '{}' has {} elements, the object says {}", s.key, count, s.element_count), pos);
    }
    pos += 8;
    std::uint64_t bytes = 0;
    if (__builtin_mul_overflow(count, s.element_bytes, &bytes) || bytes > file.size() - pos) {
      return bad("file ends inside storage '" + s.key + "'", pos);
    }
    out.storage_offsets[it->second] = pos;
    pos += bytes;
  }
  for (std::size_t i = 0; i < seen.size(); ++i) {
    if (!seen[i]) return bad("storage '" + storages[i].key + "' is used but not stored", pos);
  }
  return out;
}

}  // namespace safetensors::torch::detail
