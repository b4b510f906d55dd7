// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: a view into a temporary file would dangle as soon as the statement ends.
#include "safetensors/file.h"

int main() {
#ifdef ST_EXPECT_FAILURE
  auto v = safetensors::file::open("x.safetensors").value().view("w");
#else
  auto f = safetensors::file::open("x.safetensors");
  auto v = f.value().view("w");
#endif
  return v.ok() ? 0 : 1;
}
