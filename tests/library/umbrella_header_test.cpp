// SPDX-License-Identifier: Apache-2.0
// The umbrella header includes every public header of the core library, and compiles alone.
#include "safetensors/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

namespace {

TEST(UmbrellaHeader, IncludesEveryPublicHeader) {
  const std::filesystem::path dir = std::filesystem::path(SAFETENSORS_SOURCE_DIR) / "include" / "safetensors";
  std::ifstream in(dir / "safetensors.h");
  std::stringstream text;
  text << in.rdbuf();
  std::size_t headers = 0;
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    // safetensors_c.h is the C API's, declaring libsafetensors_c's functions, not the C++ library's.
    if (!e.is_regular_file() || name == "safetensors.h" || name == "safetensors_c.h") continue;
    ++headers;
    EXPECT_NE(text.str().find("#include \"safetensors/" + name + "\""), std::string::npos)
        << "safetensors.h does not include " << name;
  }
  EXPECT_GE(headers, 20U);
  // Names from headers no other public header includes: the umbrella alone declares them.
  EXPECT_EQ(safetensors::to_hex(safetensors::sha256_digest{}).size(), 64U);
  EXPECT_TRUE(safetensors::glob_match("model.*", "model.embed"));
}

}  // namespace
