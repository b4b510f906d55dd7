// SPDX-License-Identifier: Apache-2.0
// Checkpoints: writing shards, opening by file/index/directory, every verification
// problem, shard-name confinement, index parsing, and atomic writes.
#include <gtest/gtest.h>

#include <cerrno>
#include <fstream>

#include <fmt/format.h>

#include "platform/sys.h"
#include "safetensors/checkpoint.h"
#include "safetensors/checkpoint_index.h"
#include "safetensors/checkpoint_verify.h"
#include "safetensors/checkpoint_write.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
using safetensors::checkpoint;
using safetensors::checkpoint_problem;
using safetensors::dtype;
using safetensors::error_code;

/// Tensors t0..t{n-1}, U8 of `size` bytes each, filled with their index.
struct tensor_set {
  std::vector<std::vector<std::byte>> storage;
  std::vector<safetensors::tensor_data> tensors;
  tensor_set(std::size_t n, std::uint64_t size) {
    for (std::size_t i = 0; i < n; ++i) storage.emplace_back(size, static_cast<std::byte>(i + 1));
    for (std::size_t i = 0; i < n; ++i) tensors.push_back({fmt::format("t{}", i), dtype::U8, {size}, storage[i]});
  }
};

void write_text(const fs::path& p, const std::string& text) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out << text;
}

std::string read_text(const fs::path& p) {
  const auto bytes = st_test::read_bytes(p);
  return {reinterpret_cast<const char*>(bytes.data()), bytes.size()};
}

/// Writes one shard file holding U8 tensors of 4 bytes with the given names.
void write_shard(const fs::path& p, const std::vector<std::string>& names) {
  static const std::vector<std::byte> bytes(4, std::byte{7});
  std::vector<safetensors::tensor_data> t;
  for (const auto& n : names) t.push_back({n, dtype::U8, {4}, bytes});
  ASSERT_OK(safetensors::write_file(p.string(), t));
}

std::vector<std::string> listing(const fs::path& dir) {
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(dir)) names.push_back(e.path().filename().string());
  std::sort(names.begin(), names.end());
  return names;
}

TEST(ByteSize, DecimalAndBinaryUnits) {
  EXPECT_EQ(safetensors::parse_byte_size("5GB").value(), 5'000'000'000U);
  EXPECT_EQ(safetensors::parse_byte_size("500MB").value(), 500'000'000U);
  EXPECT_EQ(safetensors::parse_byte_size("2GiB").value(), 2147483648U);
  EXPECT_EQ(safetensors::parse_byte_size("10kb").value(), 10'000U);
  EXPECT_EQ(safetensors::parse_byte_size("1.5GB").value(), 1'500'000'000U);
  EXPECT_EQ(safetensors::parse_byte_size("123").value(), 123U);
  EXPECT_EQ(safetensors::parse_byte_size("64 KiB").value(), 65536U);
  for (const char* bad : {"", "GB", "5XB", "0", "-1GB", "99999999999999999999", "20000000TB", "1..5GB"}) {
    auto r = safetensors::parse_byte_size(bad);
    ASSERT_ERROR(r, error_code::invalid_argument) << bad;
  }
}

TEST(ShardAssignment, GreedyAsHuggingfaceHub) {
  std::vector<safetensors::tensor_spec> specs{{"a", dtype::U8, {100}},
                                              {"b", dtype::U8, {400}},
                                              {"c", dtype::U8, {100}},
                                              {"d", dtype::U8, {60}},
                                              {"e", dtype::F32, {25}}};
  safetensors::shard_write_options o;
  o.max_shard_bytes = 250;
  auto a = safetensors::assign_shards(specs, o);
  ASSERT_OK(a);
  // b is over the limit: a shard of its own, emitted at once; a + c fit 250, d would not.
  EXPECT_EQ(a->shards, (std::vector<std::vector<std::size_t>>{{1}, {0, 2}, {3, 4}}));
  EXPECT_EQ(a->file_names[0], "model-00001-of-00003.safetensors");
  EXPECT_EQ(a->file_names[2], "model-00003-of-00003.safetensors");
  o.max_shard_bytes = 5'000'000'000;
  auto one = safetensors::assign_shards(specs, o);
  EXPECT_EQ(one->file_names, std::vector<std::string>{"model.safetensors"});
}

// Every file lands in the output directory: a prefix that would leave it, name a directory or
// be empty is refused before anything is written.
TEST(ShardAssignment, PrefixIsTheStartOfAFileName) {
  const std::vector<safetensors::tensor_spec> specs{{"a", dtype::U8, {100}}, {"b", dtype::U8, {100}}};
  safetensors::shard_write_options o;
  o.max_shard_bytes = 100;
  for (const std::string& bad : std::vector<std::string>{"", "../evil", "a/b", "/abs", ".", "..", {"a\0b", 3}}) {
    o.prefix = bad;
    ASSERT_ERROR(safetensors::assign_shards(specs, o), error_code::invalid_argument) << bad;
    EXPECT_FALSE(safetensors::check_shard_prefix(bad).ok()) << bad;
  }
  const auto dir = st_test::scratch_dir();
  o.prefix = "../escaped";
  tensor_set set(2, 100);
  ASSERT_ERROR(safetensors::write_checkpoint(dir.string(), set.tensors, o), error_code::invalid_argument);
  EXPECT_TRUE(listing(dir).empty());
  EXPECT_FALSE(std::filesystem::exists(dir.parent_path() / "escaped.safetensors.index.json"));
  for (const std::string good : {"model", "my.model", "..model", "model-v2"}) {
    o.prefix = good;
    auto a = safetensors::assign_shards(specs, o);
    ASSERT_OK(a);
    EXPECT_EQ(a->file_names[0], good + "-00001-of-00002.safetensors");
  }
}

TEST(Checkpoint, WritesShardsAndOpensThemAsOneNamespace) {
  const auto dir = st_test::scratch_dir();
  tensor_set set(5, 100);
  safetensors::shard_write_options o;
  o.max_shard_bytes = 250;
  o.file.metadata = safetensors::metadata_map{{"format", "pt"}};
  ASSERT_OK(safetensors::write_checkpoint(dir.string(), set.tensors, o));
  EXPECT_EQ(listing(dir),
            (std::vector<std::string>{"model-00001-of-00003.safetensors", "model-00002-of-00003.safetensors",
                                      "model-00003-of-00003.safetensors", "model.safetensors.index.json"}));
  EXPECT_EQ(read_text(dir / "model.safetensors.index.json"),
            "{\n  \"metadata\": {\n    \"total_size\": 500\n  },\n  \"weight_map\": {\n"
            "    \"t0\": \"model-00001-of-00003.safetensors\",\n    \"t1\": \"model-00001-of-00003.safetensors\",\n"
            "    \"t2\": \"model-00002-of-00003.safetensors\",\n    \"t3\": \"model-00002-of-00003.safetensors\",\n"
            "    \"t4\": \"model-00003-of-00003.safetensors\"\n  }\n}\n");
  for (const std::string& path : {dir.string(), (dir / "model.safetensors.index.json").string()}) {
    auto c = checkpoint::open(path);
    ASSERT_OK(c);
    EXPECT_TRUE(c->sharded());
    EXPECT_EQ(c->shards().size(), 3U);
    EXPECT_EQ(c->tensors().size(), 5U);
    EXPECT_EQ(c->total_size(), 500U);
    EXPECT_EQ(c->data_size(), 500U);
    EXPECT_EQ(c->index_metadata().at("total_size"), "500");
    const auto* t3 = c->find("t3");
    ASSERT_NE(t3, nullptr);
    EXPECT_EQ(c->shards()[t3->shard].name, "model-00002-of-00003.safetensors");
    EXPECT_EQ(c->file_of(*t3).header().metadata()->at("format"), "pt");
    std::vector<std::byte> got(100);
    ASSERT_OK(c->read_into("t3", got));
    EXPECT_EQ(got, set.storage[3]);
    EXPECT_EQ(c->find("nope"), nullptr);
    EXPECT_ERROR(c->read_into("nope", got), error_code::tensor_not_found);
  }
  // Shard digests: checkpoint_verify_digest_test.cpp (component sha256).
  auto report = safetensors::verify_checkpoint(dir.string());
  ASSERT_OK(report);
  EXPECT_TRUE(report->ok());
  EXPECT_EQ(report->tensors, 5U);
  EXPECT_EQ(report->shards.size(), 3U);
}

TEST(Checkpoint, SingleShardHasNoIndex) {
  const auto dir = st_test::scratch_dir();
  tensor_set set(3, 10);
  ASSERT_OK(safetensors::write_checkpoint(dir.string(), set.tensors));
  EXPECT_EQ(listing(dir), std::vector<std::string>{"model.safetensors"});
  auto c = checkpoint::open(dir.string());
  ASSERT_OK(c);
  EXPECT_FALSE(c->sharded());
  EXPECT_EQ(c->tensors().size(), 3U);
  EXPECT_EQ(c->total_size(), std::nullopt);
  EXPECT_OK(checkpoint::open((dir / "model.safetensors").string()));
}

TEST(Checkpoint, DirectoryMustNameOneCheckpoint) {
  const auto dir = st_test::scratch_dir();
  EXPECT_ERROR(checkpoint::open(dir.string()), error_code::invalid_argument);
  write_shard(dir / "a.safetensors", {"x"});
  write_shard(dir / "b.safetensors", {"y"});
  auto two = checkpoint::open(dir.string());
  ASSERT_ERROR(two, error_code::invalid_argument);
  EXPECT_ERROR(checkpoint::open((dir / "missing").string()), error_code::io);
}

/// A directory with shards a (x, y) and b (z) and an index written by the test.
struct broken_checkpoint {
  fs::path dir = st_test::scratch_dir();
  broken_checkpoint() {
    write_shard(dir / "a.safetensors", {"x", "y"});
    write_shard(dir / "b.safetensors", {"z"});
  }
  std::string index(const std::string& json) {
    write_text(dir / "model.safetensors.index.json", json);
    return (dir / "model.safetensors.index.json").string();
  }
};

struct problem_case {
  const char* what;
  const char* index;
  checkpoint_problem kind;
  const char* tensor;
  const char* shard;
};

TEST(CheckpointVerify, EachMismatchIsNamedWithTensorAndShard) {
  const problem_case cases[] = {
      {"mapped tensor absent from its shard",
       R"({"weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors","w":"b.safetensors"}})",
       checkpoint_problem::tensor_missing_from_shard, "w", "b.safetensors"},
      {"shard tensor missing from the map", R"({"weight_map":{"x":"a.safetensors","z":"b.safetensors"}})",
       checkpoint_problem::tensor_not_in_weight_map, "y", "a.safetensors"},
      {"tensor mapped to the wrong shard",
       R"({"weight_map":{"x":"a.safetensors","y":"b.safetensors","z":"b.safetensors"}})",
       checkpoint_problem::tensor_missing_from_shard, "y", "b.safetensors"},
      {"wrong total_size",
       R"({"metadata":{"total_size":13},"weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors"}})",
       checkpoint_problem::total_size_mismatch, nullptr, "model.safetensors.index.json"},
      {"missing shard file",
       R"({"weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors","q":"c.safetensors"}})",
       checkpoint_problem::shard_invalid, nullptr, "c.safetensors"},
  };
  for (const problem_case& pc : cases) {
    SCOPED_TRACE(pc.what);
    broken_checkpoint b;
    const std::string index = b.index(pc.index);
    auto report = safetensors::verify_checkpoint(index);
    ASSERT_OK(report);
    ASSERT_FALSE(report->issues.empty());
    const auto& issue = report->issues.front();
    EXPECT_EQ(issue.kind, pc.kind) << issue.error.to_string();
    if (pc.tensor != nullptr) {
      EXPECT_EQ(issue.error.tensor, std::string(pc.tensor));
    }
    EXPECT_EQ(fs::path(issue.error.path).filename(), pc.shard) << issue.error.to_string();
    auto c = checkpoint::open(index);
    if (pc.kind == checkpoint_problem::total_size_mismatch) {
      // A stale total_size is a warning for readers, an error only for verify.
      ASSERT_OK(c);
      ASSERT_EQ(c->warnings().size(), 1U);
      EXPECT_NE(c->warnings().front().find(issue.error.message), std::string::npos) << c->warnings().front();
      continue;
    }
    // Opening fails with the same first problem.
    ASSERT_ERROR(c, issue.error.code);
    EXPECT_EQ(c.err().message, issue.error.message);
  }
  // The correct total_size passes.
  broken_checkpoint ok;
  auto good = ok.index(R"({"metadata":{"total_size":12,"format":"pt"},)"
                       R"("weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors"}})");
  EXPECT_TRUE(safetensors::verify_checkpoint(good)->ok());
  auto opened = checkpoint::open(good);
  ASSERT_OK(opened);
  EXPECT_TRUE(opened->warnings().empty());
}

TEST(CheckpointVerify, TensorInTwoShards) {
  broken_checkpoint b;
  write_shard(b.dir / "c.safetensors", {"x"});
  const auto index =
      b.index(R"({"weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors","q":"c.safetensors"}})");
  auto report = safetensors::verify_checkpoint(index);
  ASSERT_OK(report);
  bool seen = false;
  for (const auto& issue : report->issues) {
    if (issue.kind != checkpoint_problem::tensor_in_several_shards) continue;
    seen = true;
    EXPECT_EQ(issue.error.tensor, "x");
    EXPECT_NE(issue.error.message.find("a.safetensors, c.safetensors"), std::string::npos) << issue.error.message;
  }
  EXPECT_TRUE(seen);
  EXPECT_ERROR(checkpoint::open(index), error_code::shard_mismatch);
}

TEST(CheckpointVerify, ShardInvalidUnderPolicyIsReported) {
  broken_checkpoint b;
  auto bytes = st_test::read_bytes(b.dir / "b.safetensors");
  bytes.push_back(std::byte{0});  // a trailing byte: invalid by default, a warning when lenient
  st_test::write_bytes(b.dir / "b.safetensors", bytes);
  const auto index = b.index(R"({"weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors"}})");
  auto report = safetensors::verify_checkpoint(index);
  ASSERT_OK(report);
  ASSERT_EQ(report->issues.size(), 1U);
  EXPECT_EQ(report->issues[0].kind, checkpoint_problem::shard_invalid);
  EXPECT_EQ(report->issues[0].error.code, error_code::metadata_incomplete_buffer);
  safetensors::verify_options lenient;
  lenient.open.shard.parse.policy = safetensors::validation_policy::lenient;
  EXPECT_TRUE(safetensors::verify_checkpoint(index, lenient)->ok());
}

/// An index mapping tensor x to a shard name given as JSON string content.
std::string fmt_index(const std::string& json_name) { return R"({"weight_map":{"x":")" + json_name + R"("}})"; }

TEST(CheckpointSecurity, ShardNamesStayInTheDirectory) {
  broken_checkpoint b;
  const auto outside = b.dir.parent_path() / "outside.safetensors";
  write_shard(outside, {"x"});
  fs::create_symlink(outside, b.dir / "link.safetensors");
  fs::create_directories(b.dir / "sub");
  write_shard(b.dir / "sub" / "in.safetensors", {"x"});
  const char* attacks[] = {"../outside.safetensors",        "/etc/passwd",           "",
                           "sub/../../outside.safetensors", "C:outside.safetensors", "..\\\\outside.safetensors",
                           "a\\u0000.safetensors",          "link.safetensors",      ".."};
  for (const char* name : attacks) {
    SCOPED_TRACE(name);
    const auto index = b.index(fmt_index(name));
    auto c = checkpoint::open(index);
    ASSERT_ERROR(c, error_code::unsafe_path);
    auto report = safetensors::verify_checkpoint(index);
    ASSERT_OK(report);
    ASSERT_FALSE(report->issues.empty());
    EXPECT_EQ(report->issues[0].error.code, error_code::unsafe_path);
  }
  // A subdirectory inside is fine.
  EXPECT_OK(checkpoint::open(b.index(fmt_index("sub/in.safetensors"))));
}

TEST(CheckpointIndex, DuplicateKeysAnywhereAreRejected) {
  const char* duplicates[] = {
      R"({"weight_map":{"x":"a.safetensors"},"weight_map":{"x":"a.safetensors"}})",
      R"({"weight_map":{"x":"a.safetensors","x":"b.safetensors"}})",
      R"({"weight_map":{"x":"a.safetensors","\u0078":"a.safetensors"}})",
      R"({"metadata":{"total_size":1,"total_size":2},"weight_map":{}})",
      R"({"extra":[{"k":1,"k":2}],"weight_map":{}})",
  };
  for (const char* json : duplicates) {
    SCOPED_TRACE(json);
    auto r = safetensors::parse_checkpoint_index(std::as_bytes(std::span(std::string_view(json))));
    ASSERT_ERROR(r, error_code::duplicate_key);
  }
}

TEST(CheckpointIndex, SchemaAndSizeCap) {
  const char* malformed[] = {"",
                             "[]",
                             "{",
                             R"({"metadata":{}})",
                             R"({"weight_map":[]})",
                             R"({"weight_map":{"x":1}})",
                             R"({"metadata":{"total_size":-1},"weight_map":{}})",
                             R"({"metadata":{"total_size":"12"},"weight_map":{}})",
                             R"({"metadata":3,"weight_map":{}})"};
  for (const char* json : malformed) {
    SCOPED_TRACE(json);
    auto r = safetensors::parse_checkpoint_index(std::as_bytes(std::span(std::string_view(json))));
    ASSERT_ERROR(r, error_code::invalid_index);
  }
  auto ok = safetensors::parse_checkpoint_index(std::as_bytes(std::span(std::string_view(
      R"({"metadata":{"total_size":1.2e1,"total_parameters":3,"note":"hi"},"weight_map":{"b":"s","a":"s"}})"))));
  ASSERT_OK(ok);
  EXPECT_EQ(ok->total_size, 12U);
  EXPECT_EQ(ok->metadata.at("note"), "hi");
  EXPECT_EQ(ok->metadata.at("total_parameters"), "3");
  EXPECT_EQ(ok->weight_map.front().first, "a");

  broken_checkpoint b;
  EXPECT_ERROR(checkpoint::open(b.index("")), error_code::invalid_index);
  const auto index = b.index(R"({"weight_map":{"x":"a.safetensors","y":"a.safetensors","z":"b.safetensors"}})");
  safetensors::checkpoint_options small;
  small.max_index_bytes = 16;
  auto c = checkpoint::open(index, small);
  ASSERT_ERROR(c, error_code::limit_exceeded);
  EXPECT_EQ(c.err().path, index);
}

// ---- atomic writes -----------------------------------------------------------------

int failing_pwrite_budget = 0;
ssize_t failing_pwrite(int fd, const void* buf, std::size_t n, off_t offset) {
  if (failing_pwrite_budget-- <= 0) {
    errno = ENOSPC;
    return -1;
  }
  return safetensors::detail::sys::real().pwrite(fd, buf, n, offset);
}

TEST(CheckpointWrite, FailureLeavesTheDirectoryUnchanged) {
  const auto dir = st_test::scratch_dir();
  write_text(dir / "model-00001-of-00003.safetensors", "old shard");
  write_text(dir / "model.safetensors.index.json", "old index");
  tensor_set set(5, 100);
  safetensors::shard_write_options o;
  o.max_shard_bytes = 250;
  // Fail at every write in turn: each shard takes a header and two or one data writes.
  for (int budget = 0; budget < 9; ++budget) {
    SCOPED_TRACE(budget);
    safetensors::detail::sys::table t = safetensors::detail::sys::real();
    t.pwrite = &failing_pwrite;
    failing_pwrite_budget = budget;
    auto s = [&] {
      safetensors::detail::sys::scoped_override guard(t);
      return safetensors::write_checkpoint(dir.string(), set.tensors, o);
    }();
    ASSERT_ERROR(s, error_code::io);
    EXPECT_EQ(listing(dir),
              (std::vector<std::string>{"model-00001-of-00003.safetensors", "model.safetensors.index.json"}));
    EXPECT_EQ(read_text(dir / "model.safetensors.index.json"), "old index");
  }
  ASSERT_OK(safetensors::write_checkpoint(dir.string(), set.tensors, o));
  EXPECT_EQ(listing(dir).size(), 4U);
  EXPECT_OK(checkpoint::open(dir.string()));
}

TEST(CheckpointWrite, RejectsDuplicateNamesAcrossShards) {
  const auto dir = st_test::scratch_dir();
  tensor_set set(3, 100);
  set.tensors[2].name = "t0";
  safetensors::shard_write_options o;
  o.max_shard_bytes = 150;
  auto s = safetensors::write_checkpoint(dir.string(), set.tensors, o);
  ASSERT_ERROR(s, error_code::invalid_argument);
  EXPECT_TRUE(listing(dir).empty());
}

// The streaming write_checkpoint that quantize and dequantize of a checkpoint use.
TEST(CheckpointProducer, WrongSizeOrErrorWritesNothing) {
  const auto dir = st_test::scratch_dir();
  const std::vector<safetensors::tensor_spec> specs = {{"a", dtype::F32, {4}}, {"b", dtype::F32, {1000}}};
  safetensors::shard_write_options options;
  options.max_shard_bytes = 100;  // two shards
  const std::vector<std::byte> zeros(5000);
  // Chunked production of the right sizes works.
  auto ok = safetensors::write_checkpoint(
      (dir).string(), specs,
      [&](std::size_t i, const safetensors::chunk_sink& sink) -> safetensors::status {
        const std::size_t n = i == 0 ? 16 : 4000;
        for (std::size_t at = 0; at < n; at += 7) {
          if (auto s = sink(std::span(zeros).subspan(at, std::min<std::size_t>(7, n - at))); !s) return s;
        }
        return {};
      },
      options);
  ASSERT_TRUE(ok) << ok.err().to_string();
  EXPECT_EQ(ok->shards.size(), 2U);
  auto c = safetensors::checkpoint::open(dir.string());
  ASSERT_TRUE(c) << c.err().to_string();
  EXPECT_EQ(c->data_size(), 4016U);

  const auto empty = dir / "empty";
  fs::create_directories(empty);
  for (std::size_t bytes : {std::size_t{3999}, std::size_t{4001}}) {
    auto bad = safetensors::write_checkpoint(
        empty.string(), specs,
        [&](std::size_t i, const safetensors::chunk_sink& sink) {
          return sink(std::span(zeros.data(), i == 0 ? std::size_t{16} : bytes));
        },
        options);
    ASSERT_ERROR(bad, safetensors::error_code::invalid_argument);
    EXPECT_EQ(bad.err().tensor, "b");
    EXPECT_TRUE(fs::is_empty(empty));
  }
  auto failed = safetensors::write_checkpoint(
      empty.string(), specs,
      [&](std::size_t i, const safetensors::chunk_sink& sink) -> safetensors::status {
        if (i == 1) return safetensors::make_error(safetensors::error_code::io, "disk on fire");
        return sink(std::span(zeros.data(), 16));
      },
      options);
  ASSERT_FALSE(failed);
  EXPECT_EQ(failed.err().tensor, "b");
  EXPECT_TRUE(fs::is_empty(empty));
}

}  // namespace
