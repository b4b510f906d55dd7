// SPDX-License-Identifier: Apache-2.0
// GGUF metadata as __metadata__ text and back, and the GGUF writer's plan checks.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "safetensors/formats/gguf_metadata.h"
#include "safetensors/formats/gguf_writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace gguf = safetensors::gguf;
using safetensors::error_code;

TEST(GgufMetadata, TextReadsBackAsItsType) {
  auto u16 = gguf::from_text("UINT16", "65535");
  ASSERT_OK(u16);
  EXPECT_EQ(std::get<std::uint16_t>(*u16), 65535);
  auto f32 = gguf::from_text("FLOAT32", "-inf");
  ASSERT_OK(f32);
  EXPECT_EQ(std::get<float>(*f32), -INFINITY);
  auto strs = gguf::from_text("ARRAY[STRING]", R"(["a\n", "\u00fc"])");
  ASSERT_OK(strs);
  EXPECT_EQ(std::get<gguf::array_value>(*strs).strings, (std::vector<std::string>{"a\n", "\xC3\xBC"}));
  auto ints = gguf::from_text("ARRAY[INT16]", " [ -1, 2 ,3 ] ");
  ASSERT_OK(ints);
  EXPECT_EQ(gguf::to_text(*ints), "[-1,2,3]");
  auto floats = gguf::from_text("ARRAY[FLOAT64]", R"([0.1,"nan"])");
  ASSERT_OK(floats);
  EXPECT_EQ(gguf::to_text(*floats), R"([0.1,"nan"])");
}

TEST(GgufMetadata, TextOutOfRangeOrMalformedIsAnError) {
  EXPECT_ERROR(gguf::from_text("UINT8", "256"), error_code::invalid_argument);
  EXPECT_FALSE(gguf::from_text("INT8", "-129").ok());
  EXPECT_FALSE(gguf::from_text("BOOL", "yes").ok());
  EXPECT_FALSE(gguf::from_text("UINT32", "12abc").ok());
  EXPECT_FALSE(gguf::from_text("ARRAY[INT32]", "[1,,2]").ok());
  EXPECT_FALSE(gguf::from_text("ARRAY[STRING]", "[1]").ok());
  EXPECT_FALSE(gguf::from_text("ARRAY[ARRAY]", "[]").ok());
  const auto unknown = gguf::from_text("UINT128", "1");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.err().message.find("UINT128"), std::string::npos);
}

TEST(GgufMetadata, PlainMetadataBecomesStringsAndTypedMetadataIsChecked) {
  safetensors::metadata_map plain{{"b", "2"}, {"a", "x"}};
  auto entries = gguf::from_safetensors_metadata(plain);
  ASSERT_OK(entries);
  ASSERT_EQ(entries->size(), 2U);
  EXPECT_EQ((*entries)[0].key, "a");
  EXPECT_EQ(std::get<std::string>((*entries)[1].val), "2");

  safetensors::metadata_map typed{{"n", "7"}, {"s", "x"}, {"__gguf_types__", R"([["n","UINT32"]])"}};
  auto t = gguf::from_safetensors_metadata(typed);
  ASSERT_OK(t);
  EXPECT_EQ(std::get<std::uint32_t>((*t)[0].val), 7U);
  EXPECT_EQ(std::get<std::string>((*t)[1].val), "x");

  safetensors::metadata_map missing{{"__gguf_types__", R"([["gone","UINT32"]])"}};
  EXPECT_NE(gguf::from_safetensors_metadata(missing).err().message.find("'gone'"), std::string::npos);
  safetensors::metadata_map bad_value{{"n", "-1"}, {"__gguf_types__", R"([["n","UINT32"]])"}};
  EXPECT_NE(gguf::from_safetensors_metadata(bad_value).err().message.find("'n'"), std::string::npos);
  safetensors::metadata_map not_json{{"__gguf_types__", "{"}};
  EXPECT_FALSE(gguf::from_safetensors_metadata(not_json).ok());

  const std::vector<gguf::metadata_entry> reserved{{"__gguf_types__", gguf::value(std::string("x"))}};
  EXPECT_FALSE(gguf::to_safetensors_metadata(reserved).ok());
}

TEST(GgufWriter, PlanChecksNamesAndShapesAndSetsTheAlignment) {
  auto long_name = gguf::write_plan::make({}, {{std::string(64, 'x'), gguf::ggml_type::f32, {1}}});
  ASSERT_FALSE(long_name.ok());
  EXPECT_EQ(long_name.err().tensor, std::string(64, 'x'));
  EXPECT_FALSE(gguf::write_plan::make({}, {{"t", gguf::ggml_type::f32, {1, 1, 1, 1, 1}}}).ok());
  EXPECT_FALSE(gguf::write_plan::make({}, {{"t", gguf::ggml_type::q8_0, {16}}}).ok());
  EXPECT_FALSE(gguf::write_plan::make({}, {{"t", gguf::ggml_type::f32, {1}}, {"t", gguf::ggml_type::f32, {1}}}).ok());

  std::vector<gguf::metadata_entry> meta{{"general.alignment", gguf::value(std::uint64_t{64})}};
  auto plan = gguf::write_plan::make(meta, {{"a", gguf::ggml_type::f16, {3}}, {"b", gguf::ggml_type::q8_0, {2, 32}}});
  ASSERT_OK(plan);
  EXPECT_EQ(plan->tensors()[1].offset, 32U);                   // 6 bytes padded to 32
  EXPECT_EQ(plan->file_size(), plan->data_start() + 32 + 96);  // two Q8_0 blocks: 68 bytes, padded
  auto back = gguf::parse_header(plan->header_bytes(), plan->file_size());
  ASSERT_OK(back);
  EXPECT_EQ(std::get<std::uint32_t>(*back->find("general.alignment")), 32U);  // replaced, as UINT32
  EXPECT_EQ(back->tensors[1].shape, (std::vector<std::uint64_t>{2, 32}));
}

TEST(GgufWriter, StreamsOnlyCompleteFilesAndNamesTheTensorThatIsShortOrLong) {
  const auto dir = st_test::scratch_dir();
  const std::string path = (dir / "out.gguf").string();
  auto plan = [] {
    return gguf::write_plan::make({}, {{"a", gguf::ggml_type::f32, {2}}, {"b", gguf::ggml_type::f32, {1}}});
  };
  const std::vector<std::byte> eight(8, std::byte{1});

  auto short_b = gguf::stream_writer::create(path, plan().value());
  ASSERT_OK(short_b);
  ASSERT_OK(short_b->append(0, eight));
  auto incomplete = short_b->commit();
  ASSERT_ERROR(incomplete, error_code::invalid_argument);
  EXPECT_EQ(incomplete.err().tensor, "b");
  EXPECT_NE(incomplete.err().message.find("received 0 of its 4 bytes"), std::string::npos) << incomplete.err().message;

  auto long_a = gguf::stream_writer::create(path, plan().value());
  ASSERT_OK(long_a);
  auto overflow = long_a->append(0, std::span(eight.data(), 4));
  ASSERT_OK(overflow);
  overflow = long_a->append(0, eight);
  ASSERT_FALSE(overflow.ok());
  EXPECT_EQ(overflow.err().tensor, "a");
  EXPECT_FALSE(long_a->append(2, eight).ok());  // no third tensor
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "a failed write leaves nothing behind";

  auto abandoned = gguf::stream_writer::create(path, plan().value());
  ASSERT_OK(abandoned);
  ASSERT_OK(abandoned->append(0, eight));
  EXPECT_FALSE(std::filesystem::is_empty(dir)) << "the temporary file";
  abandoned->abort();
  abandoned->abort();  // twice is safe
  EXPECT_TRUE(std::filesystem::is_empty(dir)) << "an abandoned write leaves nothing behind";

  auto whole = gguf::stream_writer::create(path, plan().value());
  ASSERT_OK(whole);
  ASSERT_OK(whole->append(1, std::span(eight.data(), 4)));  // any order of tensors
  ASSERT_OK(whole->append(0, eight));
  ASSERT_OK(whole->commit());
  auto back = gguf::reader::open(path);
  ASSERT_OK(back);
  EXPECT_EQ(back->header().tensors.size(), 2U);
}

}  // namespace
