// SPDX-License-Identifier: Apache-2.0
// Writing through symlinks under the kernel's protected_symlinks rule (issue 34, item 5): in
// a sticky world-writable directory, a link owned by neither the directory's owner nor the
// caller is not followed, by the output checks nor by the writer under every output.
// Planting a link owned by someone else needs root (lchown): skipped otherwise.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <iterator>
#include <string>
#include <tuple>
#include <vector>

#include "safetensors/file.h"
#include "safetensors/output_path.h"
#include "safetensors/pipeline/convert.h"
#include "safetensors/writer.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;
namespace st = safetensors;
namespace sp = safetensors::pipeline;

constexpr uid_t nobody = 65534;

struct planted {
  fs::path dir;     ///< the directory holding the link
  fs::path link;    ///< dir/link.safetensors
  fs::path victim;  ///< the root-owned file it points at
};

/// `dir` (mode `mode`, owned by `dir_owner`) holding link.safetensors -> victim, the link owned by `link_owner`.
planted plant(const fs::path& scratch, mode_t mode, uid_t dir_owner, uid_t link_owner) {
  planted p{scratch / "shared", scratch / "shared" / "link.safetensors", scratch / "victim.safetensors"};
  st_test::write_bytes(p.victim, std::vector<std::byte>(8, std::byte{'v'}));
  fs::create_directory(p.dir);
  EXPECT_EQ(::chmod(p.dir.c_str(), mode), 0);
  EXPECT_EQ(::chown(p.dir.c_str(), dir_owner, static_cast<gid_t>(-1)), 0);
  fs::create_symlink(p.victim, p.link);
  EXPECT_EQ(::lchown(p.link.c_str(), link_owner, static_cast<gid_t>(-1)), 0);
  return p;
}

fs::path small_input(const fs::path& dir) {
  const fs::path in = dir / "in.safetensors";
  const std::vector<float> values{1, 2, 3};
  const std::vector<st::tensor_data> tensors{{"w", st::dtype::F32, {3}, std::as_bytes(std::span(values))}};
  EXPECT_OK(st::write_file(in.string(), tensors));
  return in;
}

class OutputSymlink : public ::testing::Test {
 protected:
  void SetUp() override {
    if (::geteuid() != 0) GTEST_SKIP() << "planting a link owned by another user needs root (lchown)";
    scratch_ = st_test::scratch_dir();
    in_ = small_input(scratch_);
  }
  fs::path scratch_;
  fs::path in_;
};

TEST_F(OutputSymlink, ForeignLinkInAStickyWorldWritableDirectoryIsNotFollowed) {
  const planted p = plant(scratch_, 01777, 0, nobody);
  const auto before = st_test::read_bytes(p.victim);
  auto r = sp::convert(in_.string(), p.link.string());
  ASSERT_ERROR(r, st::error_code::io);
  EXPECT_EQ(r.err().os_errno, EACCES);
  EXPECT_NE(r.err().message.find("refusing to follow the symlink"), std::string::npos) << r.err().message;
  EXPECT_NE(r.err().message.find("owned by uid 65534"), std::string::npos) << r.err().message;
  EXPECT_NE(r.err().message.find("protected_symlinks"), std::string::npos) << r.err().message;
  EXPECT_EQ(st_test::read_bytes(p.victim), before);
  EXPECT_TRUE(fs::is_symlink(p.link));
  EXPECT_EQ(std::distance(fs::directory_iterator(p.dir), fs::directory_iterator()), 1) << "a temporary was left";

  // The writer under every output refuses it too, whoever calls it.
  const std::vector<float> values{1};
  const std::vector<st::tensor_data> tensors{{"x", st::dtype::F32, {1}, std::as_bytes(std::span(values))}};
  EXPECT_ERROR(st::write_file(p.link.string(), tensors), st::error_code::io);
  EXPECT_EQ(st_test::read_bytes(p.victim), before);
  // And a link to a directory on the way.
  fs::create_directory(scratch_ / "elsewhere");
  fs::create_directory_symlink(scratch_ / "elsewhere", p.dir / "dirlink");
  ASSERT_EQ(::lchown((p.dir / "dirlink").c_str(), nobody, static_cast<gid_t>(-1)), 0);
  EXPECT_ERROR(st::resolve_output_path((p.dir / "dirlink" / "out.safetensors").string()), st::error_code::io);
  EXPECT_ERROR(sp::convert(in_.string(), (p.dir / "dirlink" / "out.safetensors").string()), st::error_code::io);
  EXPECT_FALSE(fs::exists(scratch_ / "elsewhere" / "out.safetensors"));
}

TEST_F(OutputSymlink, LinksTheRuleAllowsAreWrittenThrough) {
  // The caller's own link, the directory owner's link, and any link outside a sticky directory.
  int n = 0;
  for (const auto& [mode, dir_owner, link_owner] :
       {std::tuple{mode_t{01777}, uid_t{0}, uid_t{0}}, std::tuple{mode_t{01777}, nobody, nobody},
        std::tuple{mode_t{0777}, uid_t{0}, nobody}, std::tuple{mode_t{01775}, uid_t{0}, nobody}}) {
    const fs::path scratch = scratch_ / std::to_string(n++);
    fs::create_directory(scratch);
    const planted p = plant(scratch, mode, dir_owner, link_owner);
    ASSERT_OK(sp::convert(in_.string(), p.link.string()));
    EXPECT_TRUE(fs::is_symlink(p.link)) << "the link stays a link";
    auto f = st::file::open(p.victim.string());
    ASSERT_OK(f);
    EXPECT_EQ(f->tensors().size(), 1U);
    auto resolved = st::resolve_output_path(p.link.string());
    ASSERT_OK(resolved);
    EXPECT_EQ(*resolved, p.victim.string());
  }
}

TEST(OutputPath, PathsWithoutLinksAreKeptAndDanglingLinksReplaced) {
  const fs::path dir = st_test::scratch_dir();
  const std::string plain = (dir / "new.safetensors").string();
  auto same = st::resolve_output_path(plain);
  ASSERT_OK(same);
  EXPECT_EQ(*same, plain);
  fs::create_symlink(dir / "missing.safetensors", dir / "dangling.safetensors");
  auto dangling = st::resolve_output_path((dir / "dangling.safetensors").string());
  ASSERT_OK(dangling);
  EXPECT_EQ(*dangling, (dir / "dangling.safetensors").string());
  fs::create_symlink("loop2", dir / "loop1");
  fs::create_symlink("loop1", dir / "loop2");
  auto loop = st::resolve_output_path((dir / "loop1").string());
  ASSERT_ERROR(loop, st::error_code::io);
  EXPECT_EQ(loop.err().os_errno, ELOOP);
}

}  // namespace
