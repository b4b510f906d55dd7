/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 program linked whole against libsafetensors_c.a (target safetensors_c_static): it
 * writes a file in memory with the C writer, opens it, and reads its tensor count back. */
#include <stdio.h>
#include <stdlib.h>

#include "safetensors/safetensors_c.h"

int main(void) {
  const unsigned char data[4] = {1, 2, 3, 4};
  const uint64_t shape[1] = {4};
  safetensors_writer* writer = NULL;
  uint64_t size = 0;
  void* bytes = NULL;
  safetensors_file* file = NULL;
  size_t count = 0;
  if (safetensors_writer_new(&writer) != SAFETENSORS_OK ||
      safetensors_writer_add_tensor(writer, "x", SAFETENSORS_DTYPE_U8, shape, 1, data, sizeof data) != SAFETENSORS_OK ||
      safetensors_writer_file_size(writer, &size) != SAFETENSORS_OK || (bytes = malloc((size_t)size)) == NULL ||
      safetensors_writer_serialize(writer, bytes, (size_t)size) != SAFETENSORS_OK ||
      safetensors_open_buffer(bytes, (size_t)size, NULL, &file) != SAFETENSORS_OK ||
      safetensors_tensor_count(file, &count) != SAFETENSORS_OK || count != 1) {
    fprintf(stderr, "static consumer: %s\n", safetensors_last_error_text());
    return 1;
  }
  safetensors_close(file);
  free(bytes);
  safetensors_writer_free(writer);
  printf("static consumer ok: safetensors %s, 1 tensor\n", safetensors_version());
  return 0;
}
