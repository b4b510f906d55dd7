// SPDX-License-Identifier: Apache-2.0
// Every command that writes (st_test::writing_commands: each subcommand, each input format
// of convert, file and directory outputs) against the outputs a careful tool refuses: a
// character device, a FIFO, the input itself, a symlink and a hard link to the input, and
// a read-only directory. Each is refused with exit 2 before any byte is written: the input
// keeps its bytes and inode, the device and the FIFO stay what they were, and no file or
// directory appears anywhere.
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <map>

#include "safetensors/file.h"
#include "support/cli_run.h"
#include "support/paths.h"
#include "support/status_matchers.h"

namespace {

namespace fs = std::filesystem;

/// Every path under `root` with its type and size: what a refused command must leave alone.
std::map<std::string, std::string> snapshot(const fs::path& root) {
  std::map<std::string, std::string> all;
  for (auto it = fs::recursive_directory_iterator(root); it != fs::recursive_directory_iterator(); ++it) {
    const auto status = it->symlink_status();
    std::string what = std::to_string(static_cast<int>(status.type()));
    if (status.type() == fs::file_type::regular)
      what.append(":").append(std::to_string(it->file_size()));  // not ":" + ...: GCC 12 -Wrestrict false positive
    all[fs::relative(it->path(), root).string()] = what;
  }
  return all;
}

struct file_identity {
  std::vector<std::byte> bytes;
  ino_t inode = 0;
  bool operator==(const file_identity&) const = default;
};

file_identity identity_of(const fs::path& p) {
  file_identity id;
  id.bytes = st_test::read_bytes(p);
  struct stat st {};
  if (::stat(p.c_str(), &st) == 0) id.inode = st.st_ino;
  return id;
}

/// One bad output: how to make it (in `scratch`) for `c`, and what the error must say.
struct bad_output {
  std::string name;
  std::string expected;  // part of the error message
};

const std::vector<bad_output> bad_outputs{
    {"a character device", "not a regular file"},
    {"a FIFO", "not a regular file"},
    {"the input", "same file"},
    {"a symlink to the input", "same file"},
    {"a hard link to the input", "same file"},
    {"in a read-only directory", "Permission denied"},
};

/// A character device like /dev/null (major 1, minor 3) made in `dir`. As root, mknod; a
/// non-root user cannot replace /dev/null, so it is used; empty when neither works.
fs::path private_null_device(const fs::path& dir) {
  const fs::path device = dir / "null";
  if (::mknod(device.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) return device;
  return ::geteuid() == 0 ? fs::path() : fs::path("/dev/null");
}

class OutputWalk : public ::testing::Test {
 protected:
  /// Makes the output of case `kind` for `c` under `scratch`; returns the OUT argument, or
  /// "" when the case does not apply. `special` gets a file that must keep its type.
  std::string make_output(const st_test::writing_command& c, const std::string& kind, const fs::path& scratch,
                          fs::path& special) {
    fs::create_directories(scratch);
    // Directory outputs get the bad thing as the file the command would write in the directory.
    const fs::path target = c.directory_output ? scratch / "out" / c.file_in_output : scratch / c.output_name;
    const std::string out = c.directory_output ? (scratch / "out").string() : target.string();
    if (c.directory_output) fs::create_directories(scratch / "out");
    if (kind == "a character device") {
      // A private null device: a command that replaced it would not break the machine's /dev/null.
      const fs::path device = private_null_device(scratch);
      if (device.empty()) return {};
      special = device;
      if (!c.directory_output) return device.string();
      fs::create_symlink(device, target);
      return out;
    }
    if (kind == "a FIFO") {
      EXPECT_EQ(::mkfifo(target.c_str(), 0644), 0) << target;
      special = target;
      return out;
    }
    if (kind == "the input") {
      if (!c.directory_output) return c.input.string();
      return c.input_dir.empty() ? std::string() : c.input_dir.string();
    }
    if (kind == "a symlink to the input") {
      fs::create_symlink(c.input, target);
      return out;
    }
    if (kind == "a hard link to the input") {
      fs::create_hard_link(c.input, target);
      return out;
    }
    // A read-only directory: the output (file or directory) would be created in it.
    fs::remove_all(scratch / "out");
    fs::create_directories(scratch / "ro");
    fs::permissions(scratch / "ro", fs::perms::owner_read | fs::perms::owner_exec | fs::perms::group_read |
                                        fs::perms::group_exec | fs::perms::others_read | fs::perms::others_exec);
    return (scratch / "ro" / c.output_name).string();
  }
};

TEST_F(OutputWalk, EveryWritingCommandRefusesEveryBadOutput) {
  const fs::path dir = st_test::scratch_dir();
  const auto commands = st_test::writing_commands(dir / "in");
  ASSERT_GE(commands.size(), 20U);
  // root may write into a mode 0555 directory: the read-only case runs as an unprivileged user.
  const bool root = ::geteuid() == 0;
  const std::optional<uid_t> user = root ? st_test::unprivileged_uid() : std::nullopt;
  if (root) {
    ASSERT_TRUE(user.has_value()) << "no unprivileged user to run the read-only case as";
  }
  int n = 0;
  for (const auto& c : commands) {
    for (const auto& bad : bad_outputs) {
      const fs::path scratch = dir / ("case-" + std::to_string(n++));
      fs::path special;
      const std::string out = make_output(c, bad.name, scratch, special);
      if (out.empty()) continue;
      const bool aliases_input = bad.expected == "same file";
      const auto before = snapshot(dir);
      const file_identity input_before = identity_of(c.input);
      const auto special_type = special.empty() ? fs::file_type::none : fs::status(special).type();
      st_test::cli_child child;
      if (bad.name == "in a read-only directory") child.user = user;
      const auto r = st_test::run_cli(c.argv(out), child);
      const std::string what = c.label + " to " + bad.name + " (" + out + ")";
      if (c.rewrites_in_place && aliases_input) {
        // The documented atomic in-place rewrite: allowed, and the input stays a valid file.
        EXPECT_EQ(r.status, 0) << what << ": " << r.err;
        EXPECT_OK(safetensors::file::open(c.input.string())) << what;
        continue;
      }
      EXPECT_EQ(r.status, 2) << what << ": " << r.err;
      EXPECT_NE(r.err.find(bad.expected), std::string::npos) << what << ": " << r.err;
      EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << what << ": one line, got " << r.err;
      EXPECT_TRUE(identity_of(c.input) == input_before) << what << ": the input changed";
      EXPECT_EQ(snapshot(dir), before) << what << ": files appeared, changed or went away";
      if (!special.empty()) {
        EXPECT_EQ(fs::status(special).type(), special_type) << what;
      }
    }
  }
}

}  // namespace
