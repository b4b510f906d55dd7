// SPDX-License-Identifier: Apache-2.0
// .npz: reading archives NumPy wrote (stored, deflated, ZIP64), refusing hostile ones,
// and writing archives that read back byte for byte.
#include <gtest/gtest.h>

#include <map>

#include <fmt/format.h>

#include "safetensors/formats/npz.h"
#include "support/numpy_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace numpy = safetensors::numpy;
using safetensors::dtype;
using safetensors::error_code;
using safetensors::numpy::npz_archive;

const safetensors::numpy::npz_array* find(const numpy::npz_archive& a, std::string_view name) {
  for (const auto& array : a.arrays()) {
    if (array.name == name) return &array;
  }
  return nullptr;
}

std::vector<std::byte> read_array(const numpy::npz_archive& a, const safetensors::numpy::npz_array& array) {
  std::vector<std::byte> out(array.header.data_bytes);
  auto s = a.read(array, out);
  EXPECT_OK(s);
  return out;
}

TEST(NumpyNpz, EveryMemberMatchesNumpysBytes) {
  std::map<std::string, numpy::npz_archive> open;
  int checked = 0;
  for (const auto& e : st_test::numpy_expectations()) {
    if (e.member == "-" || e.file == st_test::numpy_zip64_fixture) continue;
    SCOPED_TRACE(e.file + ":" + e.member);
    if (!open.contains(e.file)) {
      auto a = numpy::npz_archive::open(st_test::numpy_fixture(e.file).string());
      ASSERT_OK(a);
      open.emplace(e.file, std::move(*a));
    }
    const numpy::npz_archive& archive = open.at(e.file);
    const auto* array = find(archive, e.member);
    ASSERT_NE(array, nullptr);
    EXPECT_EQ(safetensors::dtype_name(array->header.type), e.dtype);
    EXPECT_EQ(array->header.shape, e.shape);
    const auto bytes = read_array(archive, *array);
    EXPECT_EQ(st_test::hex(bytes), e.hex);
    if (auto view = archive.view(*array)) {
      EXPECT_EQ(st_test::hex(*view), e.hex);
    }
    ++checked;
  }
  EXPECT_EQ(checked, 10);
  EXPECT_EQ(open.at("stored.npz").arrays().size(), 5U);
}

// zip64.npz has ZIP64 extra fields in its central directory (sizes and offsets past
// 0xFFFFFFFF, as any archive over 4 GiB), which Debian's minizip 1.1 ignores on LP64: the
// zip reader decodes them itself.
TEST(NumpyNpz, Zip64CentralDirectory) {
  auto a = numpy::npz_archive::open(st_test::numpy_fixture(st_test::numpy_zip64_fixture).string());
  ASSERT_OK(a);
  for (const auto& e : st_test::numpy_expectations()) {
    if (e.file != st_test::numpy_zip64_fixture) continue;
    const auto* array = find(*a, e.member);
    ASSERT_NE(array, nullptr) << e.member;
    EXPECT_EQ(st_test::hex(read_array(*a, *array)), e.hex);
  }
}

TEST(NumpyNpz, StoredMembersAreViewedInPlaceDeflatedOnesAreNot) {
  auto stored = numpy::npz_archive::open(st_test::numpy_fixture("stored.npz").string());
  auto deflated = numpy::npz_archive::open(st_test::numpy_fixture("deflated.npz").string());
  ASSERT_OK(stored);
  ASSERT_OK(deflated);
  // One-byte elements are always aligned: a stored, C-order bool array must be a view.
  EXPECT_TRUE(stored->view(*find(*stored, "mask")).has_value());
  EXPECT_FALSE(deflated->view(*find(*deflated, "mask")).has_value());
  // Big-endian Fortran-order data is converted, never viewed.
  EXPECT_FALSE(stored->view(*find(*stored, "ids")).has_value());
}

TEST(NumpyNpz, HostileArchivesAreClearErrors) {
  const std::vector<std::tuple<std::string, error_code, std::string>> cases = {
      {"bad_dotdot.npz", error_code::unsafe_path, "leaves the archive"},
      {"bad_absolute.npz", error_code::unsafe_path, "leaves the archive"},
      {"bad_not_npy.npz", error_code::invalid_format, "not a .npy array"},
      {"bad_member.npz", error_code::invalid_format, "npy header"},
      {"bad_short_header.npz", error_code::invalid_format, "npy header"},
      {"bad_bomb.npz", error_code::limit_exceeded, "zip bomb"},
      {"bad_lying_size.npz", error_code::invalid_format, "data bytes"},
      {"dtype_f4.npy", error_code::invalid_format, ""},  // not a zip at all
  };
  for (const auto& [name, code, says] : cases) {
    auto a = numpy::npz_archive::open(st_test::numpy_fixture(name).string());
    ASSERT_ERROR(a, code) << name;
    EXPECT_NE(a.err().to_string().find(says), std::string::npos) << name << ": " << a.err().to_string();
    EXPECT_NE(a.err().path.find(name), std::string::npos) << name;
  }
}

struct sample {
  std::string name;
  dtype type;
  std::vector<std::uint64_t> shape;
  std::vector<std::byte> data;
};

std::vector<sample> every_numpy_dtype() {
  std::vector<sample> out;
  std::uint8_t next = 1;
  for (const dtype t : safetensors::all_dtypes()) {
    if (!safetensors::numpy::npy_descr(t)) continue;
    sample s{fmt::format("t.{}", safetensors::dtype_name(t)), t, {3, 2}, {}};
    s.data.resize(safetensors::byte_size(t, s.shape).bytes);
    for (auto& b : s.data) b = std::byte{t == dtype::BOOL ? static_cast<std::uint8_t>(next++ & 1) : next++};
    out.push_back(std::move(s));
  }
  out.push_back({"arr_0", dtype::F32, {}, std::vector<std::byte>(4, std::byte{7})});
  out.push_back({"empty", dtype::I64, {0, 5}, {}});
  return out;
}

TEST(NumpyNpz, WrittenArchivesReadBackExactly) {
  const auto dir = st_test::scratch_dir();
  const auto samples = every_numpy_dtype();
  for (const bool compress : {false, true}) {
    const auto path = (dir / (compress ? "c.npz" : "s.npz")).string();
    auto w = safetensors::numpy::npz_writer::create(path, {.compress = compress});
    ASSERT_OK(w);
    for (const auto& s : samples) ASSERT_OK(w->add_array(s.name, s.type, s.shape, s.data)) << s.name;
    ASSERT_OK(w->commit());
    auto a = numpy::npz_archive::open(path);
    ASSERT_OK(a);
    ASSERT_EQ(a->arrays().size(), samples.size());
    for (const auto& s : samples) {
      const auto* array = find(*a, s.name);
      ASSERT_NE(array, nullptr) << s.name;
      EXPECT_EQ(array->header.type, s.type) << s.name;
      EXPECT_EQ(array->header.shape, s.shape) << s.name;
      EXPECT_EQ(array->header.data_offset % 64, 0U);
      EXPECT_EQ(read_array(*a, *array), s.data) << s.name;
    }
  }
  EXPECT_LT(std::filesystem::file_size(dir / "c.npz"), std::filesystem::file_size(dir / "s.npz"));
}

// A member name beyond ASCII carries the zip's UTF-8 flag (general purpose bit 11) in its local
// and central headers, as Python's zipfile writes it; without it numpy reads the name as code
// page 437. ASCII names keep the flag clear, also as zipfile does.
TEST(NumpyNpz, NamesBeyondAsciiAreMarkedUtf8) {
  const auto dir = st_test::scratch_dir();
  const auto path = (dir / "names.npz").string();
  const std::vector<std::uint64_t> shape{2};
  const std::vector<std::byte> two(2);
  {
    auto w = safetensors::numpy::npz_writer::create(path);
    ASSERT_OK(w);
    ASSERT_OK(w->add_array("caf\xc3\xa9.w\xc3\xa9ight", dtype::U8, shape, two));
    ASSERT_OK(w->add_array("plain", dtype::U8, shape, two));
    ASSERT_OK(w->commit());
  }
  const auto bytes = st_test::read_bytes(path);
  const auto u16 = [&](std::size_t at) {
    return static_cast<unsigned>(bytes[at]) | static_cast<unsigned>(bytes[at + 1]) << 8U;
  };
  const auto signature_at = [&](std::size_t at, char kind) {
    return bytes[at] == std::byte{'P'} && bytes[at + 1] == std::byte{'K'} && static_cast<char>(bytes[at + 2]) == kind &&
           static_cast<char>(bytes[at + 3]) == kind + 1;
  };
  std::map<std::string, std::vector<unsigned>> flags;  // name -> flags of its local and central headers
  for (std::size_t at = 0; at + 46 < bytes.size(); ++at) {
    const bool local = signature_at(at, 3);
    const bool central = signature_at(at, 1);
    if (!local && !central) continue;
    const std::size_t name_at = at + (local ? 30 : 46);
    const std::size_t name_length = u16(at + (local ? 26 : 28));
    const std::string name(reinterpret_cast<const char*>(bytes.data() + name_at), name_length);
    flags[name].push_back(u16(at + (local ? 6 : 8)) & 0x800U);
  }
  EXPECT_EQ(flags["caf\xc3\xa9.w\xc3\xa9ight.npy"], (std::vector<unsigned>{0x800U, 0x800U}));
  EXPECT_EQ(flags["plain.npy"], (std::vector<unsigned>{0U, 0U}));
  auto a = numpy::npz_archive::open(path);
  ASSERT_OK(a);
  EXPECT_NE(find(*a, "caf\xc3\xa9.w\xc3\xa9ight"), nullptr);
}

TEST(NumpyNpz, WriterRefusesWhatCannotBeReadBack) {
  const auto dir = st_test::scratch_dir();
  const std::vector<std::uint64_t> shape{2};
  const std::vector<std::byte> two(2);
  {
    auto w = safetensors::numpy::npz_writer::create((dir / "x.npz").string());
    ASSERT_OK(w);
    for (const char* bad : {"../up", "/abs", "", "./x", "back\\slash"}) {
      auto s = w->add_array(bad, dtype::U8, shape, two);
      ASSERT_ERROR(s, error_code::unsafe_path) << bad;
    }
    auto fp8 = w->begin_array("f8", dtype::F8_E4M3, shape);
    ASSERT_ERROR(fp8, error_code::unsupported);
    // No numpy reads an array of more than 64 dimensions (32 before 2.0).
    const std::vector<std::uint64_t> deep(65, 1);
    auto too_deep = w->add_array("deep", dtype::U8, deep, std::span(two).first(1));
    ASSERT_ERROR(too_deep, error_code::unsupported);
    EXPECT_NE(too_deep.err().message.find("at most 64 dimensions"), std::string::npos) << too_deep.err().message;
    ASSERT_OK(w->add_array("deep_enough", dtype::U8, std::vector<std::uint64_t>(64, 1), std::span(two).first(1)));
    ASSERT_OK(w->add_array("ok", dtype::U8, shape, two));
    auto dup = w->add_array("ok", dtype::U8, shape, two);
    ASSERT_ERROR(dup, error_code::invalid_argument);
    ASSERT_OK(w->begin_array("short", dtype::U8, shape));
    ASSERT_OK(w->append(std::span(two).first(1)));
    auto too_much = w->append(two);
    ASSERT_FALSE(too_much.ok());
    auto incomplete = w->commit();
    ASSERT_FALSE(incomplete.ok());
    EXPECT_NE(incomplete.err().message.find("lacks 1 bytes"), std::string::npos) << incomplete.err().message;
  }
  // Nothing appears, not even a temporary, when the writer is abandoned.
  EXPECT_TRUE(std::filesystem::is_empty(dir));
}

}  // namespace
