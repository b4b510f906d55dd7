// SPDX-License-Identifier: Apache-2.0
// The umbrella header includes every public header of the core library and no component's,
// and compiles alone.
#include "safetensors/safetensors.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

namespace {

TEST(UmbrellaHeader, IncludesEveryPublicHeader) {
  const std::filesystem::path dir = std::filesystem::path(SAFETENSORS_SOURCE_DIR) / "include" / "safetensors";
  std::ifstream in(dir / "safetensors.h");
  std::stringstream text;
  text << in.rdbuf();
  std::size_t headers = 0;
  std::size_t components = 0;
  const std::set<std::string> component_headers = {"mlx_quant.h", "mlx_checkpoint.h", "stats.h", "sha256.h"};
  for (const auto& e : std::filesystem::directory_iterator(dir)) {
    const std::string name = e.path().filename().string();
    // safetensors_c.h is the C API's, declaring libsafetensors_c's functions, not the C++ library's.
    if (!e.is_regular_file() || name == "safetensors.h" || name == "safetensors_c.h") continue;
    const bool included = text.str().find("#include \"safetensors/" + name + "\"") != std::string::npos;
    // The components' headers need their own libraries (safetensors::mlx, ::stats, ::sha256):
    // a consumer of the core alone must compile and link with the umbrella.
    if (component_headers.contains(name)) {
      ++components;
      EXPECT_FALSE(included) << "safetensors.h includes " << name << ", a component's header";
      continue;
    }
    ++headers;
    EXPECT_TRUE(included) << "safetensors.h does not include " << name;
  }
  EXPECT_GE(headers, 20U);
  EXPECT_EQ(components, component_headers.size());
  // Names from headers no other public header includes: the umbrella alone declares them.
  EXPECT_TRUE(safetensors::glob_match("model.*", "model.embed"));
}

}  // namespace
