// SPDX-License-Identifier: Apache-2.0
#include "support/amplification_fixtures.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <span>

#include <fmt/format.h>

#include "formats/zip/zip_writer.h"
#include "safetensors/formats/npz.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace st_test {
namespace {

std::uint64_t le_at(const std::vector<std::byte>& b, std::size_t at, std::size_t width) {
  std::uint64_t v = 0;
  for (std::size_t i = width; i-- > 0;) v = (v << 8) | std::to_integer<std::uint64_t>(b.at(at + i));
  return v;
}

void put_le_at(std::vector<std::byte>& b, std::size_t at, std::uint64_t v, std::size_t width) {
  for (std::size_t i = 0; i < width; ++i) b.at(at + i) = static_cast<std::byte>((v >> (8 * i)) & 0xFF);
}

std::string le32(std::uint32_t v) {
  std::string s(4, '\0');
  for (std::size_t i = 0; i < 4; ++i) s[i] = static_cast<char>((v >> (8 * i)) & 0xFF);
  return s;
}

// Pickle opcodes, protocol 2 (as torch.save writes them).
std::string pickled_text(const std::string& s) {
  return std::string(1, 'X').append(le32(static_cast<std::uint32_t>(s.size()))).append(s);
}
std::string pickled_int(std::uint64_t v) { return std::string(1, 'J').append(le32(static_cast<std::uint32_t>(v))); }
std::string pickled_global(const std::string& module, const std::string& name) {
  return std::string(1, 'c').append(module).append(1, '\n').append(name).append(1, '\n');
}

/// {"t0": _rebuild_tensor_v2(storage, offset, (length,), (1,), False, OrderedDict()), ...}
std::string aliasing_pickle(std::uint64_t elements, std::size_t tensors, bool partial) {
  std::string p("\x80\x02}q\x00(", 6);
  const std::uint64_t length = partial ? elements / 2 : elements;
  for (std::size_t i = 0; i < tensors; ++i) {
    const std::uint64_t offset = partial ? i % (elements - length + 1) : 0;
    p += pickled_text(fmt::format("t{}", i));
    p += pickled_global("torch._utils", "_rebuild_tensor_v2");
    p += "((";
    p += pickled_text("storage") + pickled_global("torch", "FloatStorage") + pickled_text("0") + pickled_text("cpu") +
         pickled_int(elements) + "tQ";
    p += pickled_int(offset) + pickled_int(length) + "\x85" + pickled_int(1) + "\x85\x89";
    p += pickled_global("collections", "OrderedDict") + ")RtR";
  }
  return p + "u.";
}

void add_member(safetensors::detail::zip_writer& zip, const std::string& name, std::span<const std::byte> bytes) {
  ASSERT_OK(zip.begin_entry(name, false));
  ASSERT_OK(zip.write(bytes));
  ASSERT_OK(zip.end_entry());
}

}  // namespace

std::vector<std::byte> overlap_bomb(const std::vector<std::byte>& zip, const std::string& member, std::size_t copies,
                                    std::string (*name_of)(std::size_t)) {
  constexpr std::size_t eocd_bytes = 22;
  EXPECT_GE(zip.size(), eocd_bytes);
  const std::size_t eocd = zip.size() - eocd_bytes;
  EXPECT_EQ(le_at(zip, eocd, 4), 0x06054b50U) << "an archive comment or ZIP64 end record is not supported here";
  const auto entries = static_cast<std::size_t>(le_at(zip, eocd + 10, 2));
  const auto cd_size = static_cast<std::size_t>(le_at(zip, eocd + 12, 4));
  const auto cd_offset = static_cast<std::size_t>(le_at(zip, eocd + 16, 4));
  std::vector<std::byte> record;  // the member's central record
  for (std::size_t at = cd_offset; at < cd_offset + cd_size;) {
    const auto name_len = static_cast<std::size_t>(le_at(zip, at + 28, 2));
    const std::size_t len = 46 + name_len + le_at(zip, at + 30, 2) + le_at(zip, at + 32, 2);
    const std::string name(reinterpret_cast<const char*>(zip.data()) + at + 46, name_len);
    if (name == member)
      record.assign(zip.begin() + static_cast<std::ptrdiff_t>(at), zip.begin() + static_cast<std::ptrdiff_t>(at + len));
    at += len;
  }
  EXPECT_FALSE(record.empty()) << member << " is not in the archive";
  std::vector<std::byte> out(zip.begin(), zip.begin() + static_cast<std::ptrdiff_t>(cd_offset + cd_size));
  for (std::size_t i = 1; i <= copies; ++i) {
    const std::string name = name_of(i);
    EXPECT_EQ(name.size(), member.size()) << name;
    std::vector<std::byte> copy = record;
    std::memcpy(copy.data() + 46, name.data(), std::min(name.size(), member.size()));
    out.insert(out.end(), copy.begin(), copy.end());
  }
  std::vector<std::byte> end(zip.begin() + static_cast<std::ptrdiff_t>(eocd), zip.end());
  put_le_at(end, 8, entries + copies, 2);
  put_le_at(end, 10, entries + copies, 2);
  put_le_at(end, 12, cd_size + copies * record.size(), 4);
  out.insert(out.end(), end.begin(), end.end());
  return out;
}

void write_npz_overlap_bomb(const std::filesystem::path& path, std::uint64_t elements, std::size_t copies) {
  {
    auto npz = safetensors::numpy::npz_writer::create(path.string());
    ASSERT_TRUE(npz) << npz.err().to_string();
    const std::vector<std::byte> data(elements * 4, std::byte{0x3f});
    const std::uint64_t shape[] = {elements};
    ASSERT_OK(npz->add_array("a0000", safetensors::dtype::F32, shape, data));
    ASSERT_OK(npz->commit());
  }
  const auto bomb =
      overlap_bomb(read_bytes(path), "a0000.npy", copies, [](std::size_t i) { return fmt::format("a{:04}.npy", i); });
  write_bytes(path, bomb);
}

void write_aliasing_checkpoint(const std::filesystem::path& path, std::uint64_t elements, std::size_t tensors,
                               bool partial) {
  auto zip = safetensors::detail::zip_writer::create(path.string());
  ASSERT_TRUE(zip) << zip.err().to_string();
  const std::string pickle = aliasing_pickle(elements, tensors, partial);
  add_member(*zip, "archive/data.pkl", std::as_bytes(std::span(pickle)));
  const std::string order = "little";
  add_member(*zip, "archive/byteorder", std::as_bytes(std::span(order)));
  const std::vector<std::byte> storage(elements * 4, std::byte{0x3f});
  add_member(*zip, "archive/data/0", storage);
  const std::string version = "3\n";
  add_member(*zip, "archive/version", std::as_bytes(std::span(version)));
  ASSERT_OK(zip->commit());
}

}  // namespace st_test
