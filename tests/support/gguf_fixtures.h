// SPDX-License-Identifier: Apache-2.0
// The GGUF fixtures in tests/fixtures/gguf (scripts/fixtures/make_gguf_fixtures.py).
#pragma once

#include <filesystem>
#include <string>

namespace st_test {

/// tests/fixtures/gguf/`name`, as a string for argv.
inline std::string gguf_fixture(const std::string& name) {
  return (std::filesystem::path(SAFETENSORS_SOURCE_DIR) / "tests/fixtures/gguf" / name).string();
}

}  // namespace st_test
