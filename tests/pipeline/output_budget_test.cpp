// SPDX-License-Identifier: Apache-2.0
// Small inputs that would write huge outputs are refused before anything is written
// (issue 34, item 4): the zip overlap bomb (.npz and PyTorch zip), PyTorch tensors that all
// view one storage, and the output budget every conversion and rewrite plans against.
#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "formats/zip/zip_reader.h"
#include "safetensors/file.h"
#include "safetensors/formats/gguf_types.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/pipeline/output_check.h"
#include "support/amplification_fixtures.h"
#include "support/gguf_fixtures.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

bool contains(const std::string& text, const std::string& needle) { return text.find(needle) != std::string::npos; }

/// The files in `dir` (none may be left behind by a refused conversion, temporaries included).
std::vector<std::string> files_in(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  return names;
}

TEST(OutputBudget, NpzOverlapBombIsRefusedNamingMembersAndOffsets) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = dir / "bomb.npz";
  st_test::write_npz_overlap_bomb(in, 1024, 200);  // 4 KiB stored once, listed 201 times
  const fs::path out = dir / "out.safetensors";
  auto r = sp::convert(in.string(), out.string());
  ASSERT_ERROR(r, st::error_code::unsafe_content);
  EXPECT_TRUE(contains(r.err().message, "'a0000.npy' (bytes 0 to ")) << r.err().message;
  EXPECT_TRUE(contains(r.err().message, "'a0001.npy' (bytes 0 to ")) << r.err().message;
  EXPECT_TRUE(contains(r.err().message, "overlap")) << r.err().message;
  EXPECT_EQ(r.err().offset, 0U);
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"bomb.npz"});
}

TEST(OutputBudget, PyTorchZipWhoseRecordsOverlapIsRefused) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path good = dir / "good.pt";
  st_test::write_aliasing_checkpoint(good, 16, 1, false);
  ASSERT_OK(sp::convert(good.string(), (dir / "good.safetensors").string()));
  // A second directory entry pointing at storage 0's record.
  const fs::path bomb = dir / "bomb.pt";
  st_test::write_bytes(bomb, st_test::overlap_bomb(st_test::read_bytes(good), "archive/data/0", 1,
                                                   [](std::size_t) { return std::string("archive/data/1"); }));
  auto r = sp::convert(bomb.string(), (dir / "bomb.safetensors").string());
  ASSERT_ERROR(r, st::error_code::unsafe_content);
  EXPECT_TRUE(contains(r.err().message, "'archive/data/0' (bytes ")) << r.err().message;
  EXPECT_TRUE(contains(r.err().message, "'archive/data/1' (bytes ")) << r.err().message;
  EXPECT_FALSE(fs::exists(dir / "bomb.safetensors"));
}

// 2,000 names for one 2 MiB storage: 4,000 MiB planned under --shared keep, refused at the
// default budget (the 1 GiB floor, 64 times the input) before a byte is written.
TEST(OutputBudget, AliasingPickleIsRefusedAtTheDefaultBudget) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = dir / "aliases.pt";
  constexpr std::uint64_t elements = 512 * 1024;  // 2 MiB of F32
  st_test::write_aliasing_checkpoint(in, elements, 2000, false);
  const fs::path out = dir / "out.safetensors";
  auto r = sp::convert(in.string(), out.string());
  ASSERT_ERROR(r, st::error_code::limit_exceeded);
  const std::string planned = std::to_string(std::uint64_t{2000} * elements * 4);
  EXPECT_TRUE(contains(r.err().message, "would hold " + planned + " bytes")) << r.err().message;
  EXPECT_TRUE(contains(r.err().message, fmt::format("output budget of {} bytes", sp::output_budget_floor)))
      << r.err().message;
  // Named as the caller spells it (convert_options::names): the C API's key by default.
  EXPECT_TRUE(contains(r.err().message, "raise the budget with option 'max_output_size'")) << r.err().message;
  EXPECT_EQ(r.err().path, out.string());
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"aliases.pt"});

  // Tied aliases deduplicated are one tensor: that conversion is small and passes.
  sp::convert_options dedup;
  dedup.read.shared = sp::shared_tensors::dedup;
  auto deduplicated = sp::convert(in.string(), out.string(), dedup);
  ASSERT_OK(deduplicated);
  EXPECT_EQ(deduplicated->tensors, 1U);
}

TEST(OutputBudget, PartialViewsOfOneStorageAreRefusedEvenDeduplicated) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = dir / "views.pt";
  constexpr std::uint64_t elements = 512 * 1024;
  st_test::write_aliasing_checkpoint(in, elements, 2000, true);  // 2,000 different 1 MiB halves
  for (const auto shared : {sp::shared_tensors::keep, sp::shared_tensors::dedup}) {
    sp::convert_options options;
    options.read.shared = shared;
    auto r = sp::convert(in.string(), (dir / "out.npz").string(), options);
    ASSERT_ERROR(r, st::error_code::limit_exceeded);
    EXPECT_TRUE(contains(r.err().message, "would hold " + std::to_string(std::uint64_t{2000} * elements * 2)))
        << r.err().message;
  }
  EXPECT_EQ(files_in(dir), std::vector<std::string>{"views.pt"});
}

// Small aliases pass at the default (under the floor); a lowered budget refuses them, naming
// both sizes and the option, and raising it lets them through.
TEST(OutputBudget, TheLimitCanBeLoweredAndRaised) {
  const fs::path dir = st_test::scratch_dir();
  const fs::path in = dir / "aliases.pt";
  st_test::write_aliasing_checkpoint(in, 1024, 300, false);  // 300 x 4 KiB = 1,228,800 bytes
  const fs::path out = dir / "out.safetensors";
  ASSERT_OK(sp::convert(in.string(), out.string()));
  ASSERT_TRUE(fs::remove(out));

  sp::convert_options lowered;
  ASSERT_OK(sp::set_option(lowered, "max_output_size", "1MB"));
  EXPECT_EQ(lowered.max_output_bytes, 1'000'000U);
  auto r = sp::convert(in.string(), out.string(), lowered);
  ASSERT_ERROR(r, st::error_code::limit_exceeded);
  EXPECT_TRUE(contains(r.err().message,
                       "would hold 1228800 bytes of tensor data, over the output budget of 1000000 "
                       "bytes (as option 'max_output_size' sets it)"))
      << r.err().message;
  EXPECT_FALSE(fs::exists(out));

  sp::convert_options raised;
  ASSERT_OK(sp::set_option(raised, "max_output_size", "1228800"));
  auto summary = sp::convert(in.string(), out.string(), raised);
  ASSERT_OK(summary);
  EXPECT_EQ(summary->bytes, 1'228'800U);
  EXPECT_ERROR(sp::set_option(raised, "max_output_size", "lots"), st::error_code::invalid_argument);
}

TEST(OutputBudget, DefaultIsARatioOfTheInputWithAFloor) {
  EXPECT_EQ(sp::default_output_budget(0), sp::output_budget_floor);
  EXPECT_EQ(sp::default_output_budget(std::uint64_t{1} << 20), sp::output_budget_floor);
  EXPECT_EQ(sp::default_output_budget(std::uint64_t{1} << 30), std::uint64_t{64} << 30);
  EXPECT_EQ(sp::default_output_budget(UINT64_MAX / 2), UINT64_MAX);
  EXPECT_OK(sp::check_output_budget(std::uint64_t{64} << 30, std::uint64_t{1} << 30, 0));
  auto over = sp::check_output_budget((std::uint64_t{64} << 30) + 1, std::uint64_t{1} << 30, 0);
  ASSERT_ERROR(over, st::error_code::limit_exceeded);
  EXPECT_TRUE(contains(over.err().message, "64 times the 1073741824-byte input")) << over.err().message;
}

// Every GGUF type, the most compact ones (Q1_0: 1.125 bits a weight; IQ1_S: 1.5625)
// included, dequantized to F32 and even cast on to F64 stays within the default ratio.
TEST(OutputBudget, DequantizingTheMostCompactGgufTypesFitsTheRatio) {
  double most = 0;
  std::string which;
  for (const auto& t : st::gguf::all_types()) {
    const double grows = 8.0 * t.block_elements / t.block_bytes;  // to F64
    if (grows > most) {
      most = grows;
      which = t.name;
    }
  }
  EXPECT_LE(most, static_cast<double>(sp::output_budget_ratio)) << which;
  EXPECT_GT(most, 32.0) << which << ": the ratio is meant for types under 2 bits a weight";

  // End to end, a quantized GGUF converts with the budget at 64 times its size, floor aside.
  const fs::path dir = st_test::scratch_dir();
  const std::string in = st_test::gguf_fixture("quantized.gguf");
  sp::convert_options options;
  options.max_output_bytes = sp::output_budget_ratio * fs::file_size(in);
  auto summary = sp::convert(in, (dir / "out.safetensors").string(), options);
  ASSERT_OK(summary);
  EXPECT_GT(summary->bytes, 2 * fs::file_size(in)) << "the fixture should expand when dequantized";
}

}  // namespace
