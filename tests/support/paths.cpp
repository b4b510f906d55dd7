// SPDX-License-Identifier: Apache-2.0
#include "support/paths.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <span>

namespace st_test {

std::filesystem::path conformance_dir() {
  const char* env = std::getenv("SAFETENSORS_CONFORMANCE_DIR");
  std::filesystem::path dir = env != nullptr ? env : SAFETENSORS_CONFORMANCE_DIR;
  if (!std::filesystem::exists(dir / "format" / "verdicts.tsv")) {
    ADD_FAILURE() << "conformance corpus missing: expected " << (dir / "format" / "verdicts.tsv")
                  << " (the shared/ folder must sit beside the repository, or set SAFETENSORS_CONFORMANCE_DIR)";
  }
  return dir;
}

std::filesystem::path scratch_dir() {
  const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
  std::string name = info != nullptr ? std::string(info->test_suite_name()) + "." + info->name() : "scratch";
  for (char& c : name) {
    if (c == '/') c = '_';
  }
  auto dir = std::filesystem::temp_directory_path() / ("safetensors-test-" + std::to_string(::getpid())) / name;
  std::filesystem::remove_all(dir);
  std::filesystem::create_directories(dir);
  return dir;
}

std::vector<std::byte> read_bytes(const std::filesystem::path& p) {
  const std::string text = read_text(p);
  const auto bytes = std::as_bytes(std::span(text));
  return {bytes.begin(), bytes.end()};
}

// One sized read: GCC 12 at -O3 warns (falsely) about null pointers in istreambuf_iterator's loop.
std::string read_text(const std::filesystem::path& p) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(p, ec);
  std::ifstream in(p, std::ios::binary);
  if (ec || !in) return {};
  std::string text(size, '\0');
  in.read(text.data(), static_cast<std::streamsize>(size));
  text.resize(static_cast<std::size_t>(in.gcount()));
  return text;
}

void write_bytes(const std::filesystem::path& p, const std::vector<std::byte>& bytes) {
  std::ofstream out(p, std::ios::binary | std::ios::trunc);
  out.write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
}

command_result run_command(const std::string& command, bool merge_stderr) {
  command_result r;
  std::string full = command + (merge_stderr ? " 2>&1" : "");
  FILE* pipe = ::popen(full.c_str(), "r");
  if (pipe == nullptr) return r;
  char buf[4096];
  std::size_t n = 0;
  while ((n = std::fread(buf, 1, sizeof buf, pipe)) > 0) r.out.append(buf, n);
  int status = ::pclose(pipe);
  r.status = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return r;
}

std::string shell_quote(const std::string& s) {
  std::string out = "'";
  for (char c : s) {
    if (c == '\'') {
      out += "'\\''";
    } else {
      out += c;
    }
  }
  return out + "'";
}

}  // namespace st_test
