// SPDX-License-Identifier: Apache-2.0
// Must NOT compile: the tensor list of a temporary checkpoint would dangle as soon as the
// statement ends.
#include "safetensors/checkpoint.h"

int main() {
#ifdef ST_EXPECT_FAILURE
  auto tensors = safetensors::checkpoint::open("dir").value().tensors();
#else
  auto opened = safetensors::checkpoint::open("dir");
  auto tensors = opened.value().tensors();
#endif
  return tensors.empty() ? 0 : 1;
}
