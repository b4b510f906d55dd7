/* SPDX-License-Identifier: Apache-2.0 */
/* A C99 program that only sees the installed C API (libsafetensors_c): every file of the
 * conformance corpus must get its expected verdict (verdicts.tsv) when opened with mmap, with
 * pread and from memory; then a file written through the C writer is read back.
 * Usage: c_consumer CORPUS_DIR SCRATCH_DIR. Prints "c consumer ok: N files". */
#include <safetensors/safetensors_c.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int failures = 0;

static void check(int condition, const char* what, const char* file) {
  if (!condition) {
    fprintf(stderr, "FAIL %s: %s (last error: %s)\n", file, what, safetensors_last_error_text());
    ++failures;
  }
}

static unsigned char* read_whole(const char* path, size_t* size) {
  FILE* in = fopen(path, "rb");
  unsigned char* bytes = NULL;
  long length = 0;
  if (in == NULL) return NULL;
  if (fseek(in, 0, SEEK_END) == 0 && (length = ftell(in)) >= 0 && fseek(in, 0, SEEK_SET) == 0) {
    bytes = (unsigned char*)malloc((size_t)length + 1);
    if (bytes != NULL && fread(bytes, 1, (size_t)length, in) != (size_t)length) {
      free(bytes);
      bytes = NULL;
    }
  }
  fclose(in);
  *size = (size_t)length;
  return bytes;
}

/* The verdict name of one way of opening `path`. */
static const char* verdict(const char* path, int backend, const unsigned char* bytes, size_t size) {
  safetensors_options* options = NULL;
  safetensors_file* file = NULL;
  int status;
  if (safetensors_options_new(&options) != SAFETENSORS_OK) return "options failed";
  if (bytes != NULL) {
    status = safetensors_open_buffer(bytes, size, options, &file);
  } else {
    safetensors_options_set_backend(options, backend);
    status = safetensors_open(path, options, &file);
  }
  safetensors_options_free(options);
  if (status == SAFETENSORS_OK) {
    size_t count = 0, i;
    /* A valid file's entries can all be read. */
    if (safetensors_tensor_count(file, &count) != SAFETENSORS_OK) status = -1;
    for (i = 0; i < count && status == SAFETENSORS_OK; ++i) {
      const char* name = NULL;
      uint64_t begin = 0, end = 0;
      void* data;
      if (safetensors_tensor_name(file, i, &name, NULL) != SAFETENSORS_OK ||
          safetensors_tensor_offsets(file, i, &begin, &end) != SAFETENSORS_OK) {
        status = -1;
        break;
      }
      data = malloc((size_t)(end - begin) + 1);
      if (data == NULL || safetensors_tensor_read(file, i, data, (size_t)(end - begin)) != SAFETENSORS_OK) status = -1;
      free(data);
    }
    safetensors_close(file);
    return status == SAFETENSORS_OK ? "ok" : "read failed";
  }
  if (file != NULL || safetensors_last_error_code() != status) return "inconsistent failure";
  return safetensors_status_name(status);
}

static int run_corpus(const char* dir) {
  char path[4096], line[4096];
  FILE* tsv;
  int files = 0;
  snprintf(path, sizeof path, "%s/verdicts.tsv", dir);
  tsv = fopen(path, "r");
  if (tsv == NULL) {
    fprintf(stderr, "cannot open %s\n", path);
    return -1;
  }
  if (fgets(line, sizeof line, tsv) == NULL) line[0] = '\0'; /* the header row */
  while (fgets(line, sizeof line, tsv) != NULL) {
    char* name = strtok(line, "\t");
    char* reference = strtok(NULL, "\t");
    char* expected = strtok(NULL, "\t\n");
    unsigned char* bytes;
    size_t size = 0;
    (void)reference;
    if (name == NULL || expected == NULL) continue;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    check(strcmp(verdict(path, SAFETENSORS_BACKEND_MMAP, NULL, 0), expected) == 0, "mmap verdict", name);
    check(strcmp(verdict(path, SAFETENSORS_BACKEND_PREAD, NULL, 0), expected) == 0, "pread verdict", name);
    bytes = read_whole(path, &size);
    check(bytes != NULL, "read the file", name);
    if (bytes != NULL) check(strcmp(verdict(path, 0, bytes, size), expected) == 0, "buffer verdict", name);
    free(bytes);
    ++files;
  }
  fclose(tsv);
  return files;
}

static void round_trip(const char* scratch) {
  const float values[6] = {1, 2, 3, 4, 5, 6};
  const uint64_t shape[2] = {2, 3};
  float column[2] = {0, 0};
  char path[4096];
  safetensors_writer* writer = NULL;
  safetensors_file* file = NULL;
  safetensors_slice* slice = NULL;
  const char* value = NULL;
  size_t index = 0;
  snprintf(path, sizeof path, "%s/c_consumer.safetensors", scratch);
  check(safetensors_writer_new(&writer) == SAFETENSORS_OK, "writer", path);
  check(safetensors_writer_add_tensor(writer, "w", SAFETENSORS_DTYPE_F32, shape, 2, values, sizeof values) ==
            SAFETENSORS_OK,
        "add tensor", path);
  check(safetensors_writer_set_metadata(writer, "format", "pt") == SAFETENSORS_OK, "metadata", path);
  check(safetensors_writer_write(writer, path) == SAFETENSORS_OK, "write", path);
  safetensors_writer_free(writer);
  check(safetensors_open(path, NULL, &file) == SAFETENSORS_OK, "open", path);
  if (file == NULL) return;
  check(safetensors_metadata_get(file, "format", &value, NULL) == SAFETENSORS_OK && value != NULL &&
            strcmp(value, "pt") == 0,
        "metadata back", path);
  check(safetensors_tensor_find(file, "w", &index) == SAFETENSORS_OK, "find", path);
  check(safetensors_slice_new(file, index, ":, -1", &slice) == SAFETENSORS_OK, "slice", path);
  check(safetensors_slice_read_f32(slice, column, 2) == SAFETENSORS_OK, "slice read", path);
  check(column[0] == 3 && column[1] == 6, "slice values", path);
  safetensors_slice_free(slice);
  safetensors_close(file);
}

int main(int argc, char** argv) {
  int files;
  if (argc != 3) {
    fprintf(stderr, "usage: %s CORPUS_DIR SCRATCH_DIR\n", argv[0]);
    return 2;
  }
  if (strcmp(safetensors_version(), "0.0.0") == 0) return 2;
  files = run_corpus(argv[1]);
  round_trip(argv[2]);
  if (files < 0 || failures != 0) {
    fprintf(stderr, "%d failures\n", failures);
    return 1;
  }
  printf("c consumer ok: %d files (libsafetensors_c %s)\n", files, safetensors_version());
  return 0;
}
