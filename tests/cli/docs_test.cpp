// SPDX-License-Identifier: Apache-2.0
// The documentation stays true: every ```cpp block of README.md and docs/*.md compiles
// warning-free (-Wall -Wextra -Werror), docs/cli.md covers every subcommand, and no link
// leads outside the repository.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "support/cli_run.h"
#include "support/paths.h"

namespace {

namespace fs = std::filesystem;

const fs::path source_dir{SAFETENSORS_SOURCE_DIR};

std::string read_text(const fs::path& p) {
  std::ifstream in(p);
  std::stringstream s;
  s << in.rdbuf();
  return s.str();
}

std::vector<fs::path> markdown_files() {
  std::vector<fs::path> out = {source_dir / "README.md"};
  for (const auto& e : fs::directory_iterator(source_dir / "docs")) {
    if (e.path().extension() == ".md") out.push_back(e.path());
  }
  for (const char* top : {"SECURITY.md", "CONTRIBUTING.md"}) {
    if (fs::exists(source_dir / top)) out.push_back(source_dir / top);
  }
  std::sort(out.begin(), out.end());
  return out;
}

struct code_block {
  std::string file;  ///< relative to the repository
  int first_line = 0;
  std::string text;
};

/// The ```cpp blocks of a Markdown file (fences may be indented, as inside list items).
std::vector<code_block> cpp_blocks(const fs::path& file) {
  std::vector<code_block> out;
  std::istringstream in(read_text(file));
  std::string line;
  int number = 0;
  std::optional<code_block> open;
  std::size_t indent = 0;
  while (std::getline(in, line)) {
    ++number;
    const std::size_t first = line.find_first_not_of(' ');
    const std::string trimmed = first == std::string::npos ? "" : line.substr(first);
    if (!open && trimmed == "```cpp") {
      open = code_block{fs::relative(file, source_dir).string(), number + 1, ""};
      indent = first;
    } else if (open && trimmed == "```") {
      out.push_back(std::move(*open));
      open.reset();
    } else if (open) {
      open->text += (line.size() >= indent ? line.substr(indent) : std::string()) + "\n";
    }
  }
  return out;
}

TEST(Docs, EveryCppExampleCompilesWithoutWarnings) {
  // One translation unit: includes on top, each block as the body of its own function.
  std::string includes;
  std::string bodies;
  std::size_t blocks = 0;
  for (const auto& file : markdown_files()) {
    for (const auto& block : cpp_blocks(file)) {
      std::istringstream in(block.text);
      std::string body;
      for (std::string line; std::getline(in, line);) {
        (line.rfind("#include", 0) == 0 ? includes : body) += line + "\n";
      }
      // #line: compiler errors point at the Markdown file and line.
      bodies += "[[maybe_unused]] static int example_" + std::to_string(blocks++) + "() {\n#line " +
                std::to_string(block.first_line) + " \"" + block.file + "\"\n" + body + "  return 0;\n}\n";
    }
  }
  ASSERT_GE(blocks, 3U) << "the README and docs/dtypes.md have C++ examples";
  const fs::path source = st_test::scratch_dir() / "doc_examples.cpp";
  std::ofstream(source) << "#include <cerrno>\n#include <cstdio>\n#include <iostream>\n#include <vector>\n"
                        << includes << "\n"
                        << bodies;
  const std::string command =
      st_test::shell_quote(SAFETENSORS_CXX_COMPILER) +
      " -std=c++20 -fsyntax-only -Wall -Wextra -Werror -Wno-unused-variable -Wno-unused-but-set-variable -I" +
      st_test::shell_quote((source_dir / "include").string()) + " -I" +
      st_test::shell_quote((source_dir / "tests").string()) + " -I" +
      st_test::shell_quote((source_dir / "src").string()) + " -I" +
      st_test::shell_quote((source_dir / "src" / "core").string()) + " " + st_test::shell_quote(source.string());
  auto r = st_test::run_command(command, true);
  EXPECT_EQ(r.status, 0) << "a documentation example does not compile cleanly:\n" << r.out;
}

TEST(Docs, CliPageCoversEverySubcommand) {
  auto help = st_test::run_cli({"--help"});
  ASSERT_EQ(help.status, 0);
  // CLI11 lists subcommands under "Subcommands:", one per line, name first, then a blank line.
  const std::size_t at = help.out.find("Subcommands:");
  ASSERT_NE(at, std::string::npos) << help.out;
  std::istringstream in(help.out.substr(at));
  std::string line;
  std::getline(in, line);
  std::vector<std::string> names;
  while (std::getline(in, line) && !line.empty()) {
    std::istringstream words(line);
    std::string name;
    if (words >> name) names.push_back(name);
  }
  ASSERT_GE(names.size(), 15U) << help.out;
  const std::string page = read_text(source_dir / "docs" / "cli.md");
  for (const auto& name : names) {
    EXPECT_NE(page.find("| `" + name), std::string::npos) << "docs/cli.md's table lacks " << name;
    EXPECT_TRUE(std::regex_search(page, std::regex("\n## [^\n]*\\b" + name + "\\b"))) << "no section for " << name;
  }
}

/// True when `word` occurs in `text` as a whole entry: after a line start, space or '/', and
/// before a space, ',', ':' or line end.
bool shows_word(const std::string& text, const std::string& word) {
  for (std::size_t at = text.find(word); at != std::string::npos; at = text.find(word, at + 1)) {
    const char before = at == 0 ? '\n' : text[at - 1];
    const std::size_t end = at + word.size();
    const char after = end == text.size() ? '\n' : text[end];
    if (std::string_view("\n /").find(before) != std::string_view::npos &&
        std::string_view("\n ,:").find(after) != std::string_view::npos) {
      return true;
    }
  }
  return false;
}

TEST(Docs, ArchitectureShowsEverySubsystem) {
  // Every public header, every folder of src/ (the core's and formats' too) and every top-level folder of the
  // repository appears in docs/architecture.md's tree, so the map cannot silently fall behind.
  const std::string page = read_text(source_dir / "docs" / "architecture.md");
  std::vector<std::string> names;
  for (const auto& e : fs::directory_iterator(source_dir / "include" / "safetensors")) {
    if (e.is_regular_file()) names.push_back(e.path().filename().string());
  }
  for (const char* folder : {"src", "src/core", "src/formats"}) {
    for (const auto& e : fs::directory_iterator(source_dir / folder)) {
      if (e.is_directory()) names.push_back(e.path().filename().string() + "/");
    }
  }
  for (const char* top :
       {"include/safetensors/", "src/", "tools/cli/", "python/", "tests/", "fuzz/", "bench/", "scripts/"}) {
    names.emplace_back(top);
  }
  ASSERT_GE(names.size(), 30U);
  for (const auto& name : names) {
    EXPECT_TRUE(shows_word(page, name)) << "docs/architecture.md does not show " << name;
  }
}

TEST(Docs, LinksStayInsideTheRepository) {
  const std::regex link(R"(\]\(([^)#\s]+)(#[^)]*)?\))");
  const fs::path root = fs::weakly_canonical(source_dir);
  for (const auto& file : markdown_files()) {
    const std::string text = read_text(file);
    for (std::sregex_iterator it(text.begin(), text.end(), link), end; it != end; ++it) {
      const std::string target = (*it)[1];
      if (target.find("://") != std::string::npos || target.rfind("mailto:", 0) == 0) continue;
      const fs::path resolved = fs::weakly_canonical(file.parent_path() / target);
      const std::string rel = fs::relative(resolved, root).string();
      EXPECT_TRUE(rel.rfind("..", 0) != 0 && fs::exists(resolved))
          << file.filename() << " links to " << target << ", which is not a file of the repository";
    }
    // Notes beside the repository are not part of it: a reader of the docs does not have them.
    EXPECT_EQ(text.find("../shared/notes"), std::string::npos) << file.filename() << " points into ../shared/notes";
  }
}

}  // namespace
