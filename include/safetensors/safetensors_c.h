/* SPDX-License-Identifier: Apache-2.0 */
/**
 * \file safetensors_c.h
 * The C API of safetensors-cxx (libsafetensors_c): a C99 interface with a stable ABI over
 * the C++ library, for C programs and for other languages (Python ctypes, Go cgo, ...).
 *
 * Conventions (docs/c-api.md has the full guide and an example):
 * - Every function that can fail returns an `int` status: SAFETENSORS_OK (0) or one of the
 *   SAFETENSORS_ERR_* codes, which mirror safetensors::error_code (code = error_code + 1).
 *   The details of the latest failure are kept per thread: safetensors_last_error_message(),
 *   _offset(), _tensor(), _path(), _os_errno(). A successful call leaves them unchanged.
 * - Handles are opaque and freed by their own `_free` function (NULL is accepted).
 *   Nothing else is allocated for the caller: data goes into caller-owned buffers, and the
 *   strings a handle returns live as long as the handle.
 * - No C++ exception crosses this boundary; running out of memory is
 *   SAFETENSORS_ERR_OUT_OF_MEMORY.
 * - An open file is immutable: several threads may read from one handle at once.
 */
#ifndef SAFETENSORS_SAFETENSORS_C_H
#define SAFETENSORS_SAFETENSORS_C_H

#include <stddef.h>
#include <stdint.h>

#if defined(SAFETENSORS_C_STATIC)
#define SAFETENSORS_C_API
#elif defined(_WIN32)
#if defined(SAFETENSORS_C_BUILDING)
#define SAFETENSORS_C_API __declspec(dllexport)
#else
#define SAFETENSORS_C_API __declspec(dllimport)
#endif
#else
#define SAFETENSORS_C_API __attribute__((visibility("default")))
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---- Version ------------------------------------------------------------------------- */

/** The version of this header; safetensors_version_number() gives the library's. */
#define SAFETENSORS_C_VERSION_MAJOR 0
#define SAFETENSORS_C_VERSION_MINOR 1
#define SAFETENSORS_C_VERSION_PATCH 0

/** The library's version as text, "0.1.0". */
SAFETENSORS_C_API const char* safetensors_version(void);
/** The library's version as major * 10000 + minor * 100 + patch. */
SAFETENSORS_C_API uint32_t safetensors_version_number(void);

/* ---- Status codes -------------------------------------------------------------------- */

/** Status of a call. 1-25 mirror safetensors::error_code in order (safetensors/error.h). */
enum safetensors_status {
  SAFETENSORS_OK = 0,
  SAFETENSORS_ERR_HEADER_TOO_SMALL = 1,
  SAFETENSORS_ERR_HEADER_TOO_LARGE = 2,
  SAFETENSORS_ERR_INVALID_HEADER_LENGTH = 3,
  SAFETENSORS_ERR_INVALID_HEADER = 4,
  SAFETENSORS_ERR_INVALID_HEADER_DESERIALIZATION = 5,
  SAFETENSORS_ERR_DUPLICATE_KEY = 6,
  SAFETENSORS_ERR_INVALID_OFFSET = 7,
  SAFETENSORS_ERR_VALIDATION_OVERFLOW = 8,
  SAFETENSORS_ERR_MISALIGNED_SLICE = 9,
  SAFETENSORS_ERR_TENSOR_INVALID_INFO = 10,
  SAFETENSORS_ERR_METADATA_INCOMPLETE_BUFFER = 11,
  SAFETENSORS_ERR_LIMIT_EXCEEDED = 12,
  SAFETENSORS_ERR_UNKNOWN_FIELD = 13,
  SAFETENSORS_ERR_TENSOR_NOT_FOUND = 14,
  SAFETENSORS_ERR_INVALID_ARGUMENT = 15,
  SAFETENSORS_ERR_IO = 16,
  SAFETENSORS_ERR_INVALID_SLICE = 17,
  SAFETENSORS_ERR_INVALID_INDEX = 18,
  SAFETENSORS_ERR_UNSAFE_PATH = 19,
  SAFETENSORS_ERR_SHARD_MISMATCH = 20,
  SAFETENSORS_ERR_INVALID_FORMAT = 21,
  SAFETENSORS_ERR_UNSUPPORTED = 22,
  SAFETENSORS_ERR_UNSAFE_CONTENT = 23,
  SAFETENSORS_ERR_CANCELLED = 24,
  SAFETENSORS_ERR_CODE_EXECUTION = 25, /* a pickle names a global that runs code: an attack, not a corrupt file */
  /* The C API's own: failures the C++ library reports as exceptions. */
  SAFETENSORS_ERR_OUT_OF_MEMORY = 100,
  SAFETENSORS_ERR_INTERNAL = 101
};

/** The name of a status as the CLI prints it: "ok", "InvalidOffset", "IoError", ...;
 *  "Unknown" for a number that is not a status. Never NULL; a static string. */
SAFETENSORS_C_API const char* safetensors_status_name(int status);

/* ---- The last error (per thread) ----------------------------------------------------- */

/** Status of the latest failed call in this thread; SAFETENSORS_OK if none failed yet. */
SAFETENSORS_C_API int safetensors_last_error_code(void);
/** Its message, without location ("" if none). Valid until the next failure in this thread. */
SAFETENSORS_C_API const char* safetensors_last_error_message(void);
/** 1 and the byte offset in the file where it applies; 0 (and *offset untouched) when none. */
SAFETENSORS_C_API int safetensors_last_error_offset(uint64_t* offset);
/** The tensor it names, or NULL. */
SAFETENSORS_C_API const char* safetensors_last_error_tensor(void);
/** The file path it concerns ("" for buffers). */
SAFETENSORS_C_API const char* safetensors_last_error_path(void);
/** errno for SAFETENSORS_ERR_IO, else 0. */
SAFETENSORS_C_API int safetensors_last_error_os_errno(void);
/** The CLI's one-line report: "<path>: <message> (at byte N, tensor 'T')". */
SAFETENSORS_C_API const char* safetensors_last_error_text(void);
/** The byte lengths of the three strings above. A tensor name may contain NUL (U+0000), and
 *  so may a message or report that names it: read `length` bytes, not up to the first NUL.
 *  The tensor's length is 0 when safetensors_last_error_tensor() is NULL. */
SAFETENSORS_C_API size_t safetensors_last_error_message_length(void);
SAFETENSORS_C_API size_t safetensors_last_error_tensor_length(void);
SAFETENSORS_C_API size_t safetensors_last_error_text_length(void);
/** Forgets the last error (code back to SAFETENSORS_OK). */
SAFETENSORS_C_API void safetensors_clear_error(void);

/* ---- Element types ------------------------------------------------------------------- */

/** The 22 dtypes, in the reference's order (as safetensors::dtype). */
enum safetensors_dtype {
  SAFETENSORS_DTYPE_BOOL = 0,
  SAFETENSORS_DTYPE_F4 = 1,
  SAFETENSORS_DTYPE_F6_E2M3 = 2,
  SAFETENSORS_DTYPE_F6_E3M2 = 3,
  SAFETENSORS_DTYPE_U8 = 4,
  SAFETENSORS_DTYPE_I8 = 5,
  SAFETENSORS_DTYPE_F8_E5M2 = 6,
  SAFETENSORS_DTYPE_F8_E4M3 = 7,
  SAFETENSORS_DTYPE_F8_E8M0 = 8,
  SAFETENSORS_DTYPE_F8_E4M3FNUZ = 9,
  SAFETENSORS_DTYPE_F8_E5M2FNUZ = 10,
  SAFETENSORS_DTYPE_I16 = 11,
  SAFETENSORS_DTYPE_U16 = 12,
  SAFETENSORS_DTYPE_F16 = 13,
  SAFETENSORS_DTYPE_BF16 = 14,
  SAFETENSORS_DTYPE_I32 = 15,
  SAFETENSORS_DTYPE_U32 = 16,
  SAFETENSORS_DTYPE_F32 = 17,
  SAFETENSORS_DTYPE_C64 = 18,
  SAFETENSORS_DTYPE_F64 = 19,
  SAFETENSORS_DTYPE_I64 = 20,
  SAFETENSORS_DTYPE_U64 = 21
};

/** "BF16", "F8_E4M3", ...; NULL for a number that is not a dtype. A static string. */
SAFETENSORS_C_API const char* safetensors_dtype_name(int dtype);
/** Parses an exact, case-sensitive name. Errors: INVALID_ARGUMENT. */
SAFETENSORS_C_API int safetensors_dtype_from_name(const char* name, int* dtype);
/** Bits per element (4, 6, 8 ... 64); 0 for a number that is not a dtype. */
SAFETENSORS_C_API unsigned safetensors_dtype_bits(int dtype);

/* ---- Options ------------------------------------------------------------------------- */

/** How a file's bytes are reached. */
enum safetensors_backend {
  SAFETENSORS_BACKEND_MMAP = 0, /**< mapped read-only (default) */
  SAFETENSORS_BACKEND_PREAD = 1 /**< read on request; safe for files others may modify */
};

/** How strictly the header is checked (docs/format-policy.md). */
enum safetensors_policy {
  SAFETENSORS_POLICY_REFERENCE = 0, /**< huggingface/safetensors' verdicts (default) */
  SAFETENSORS_POLICY_STRICT = 1,    /**< plus unknown fields rejected and upload caps */
  SAFETENSORS_POLICY_LENIENT = 2    /**< bytes after the last tensor are only a warning */
};

/** Resource caps; unset ones take the policy's defaults. */
enum safetensors_limit {
  SAFETENSORS_LIMIT_MAX_HEADER_BYTES = 0,
  SAFETENSORS_LIMIT_MAX_TENSORS = 1,
  SAFETENSORS_LIMIT_MAX_RANK = 2,
  SAFETENSORS_LIMIT_MAX_NAME_BYTES = 3,
  SAFETENSORS_LIMIT_MAX_METADATA_BYTES = 4
};

/** Options for opening; NULL options anywhere mean the defaults. */
typedef struct safetensors_options safetensors_options;

SAFETENSORS_C_API int safetensors_options_new(safetensors_options** out);
SAFETENSORS_C_API void safetensors_options_free(safetensors_options* options);
/** Errors: INVALID_ARGUMENT for an unknown backend. */
SAFETENSORS_C_API int safetensors_options_set_backend(safetensors_options* options, int backend);
/** Errors: INVALID_ARGUMENT for an unknown policy. */
SAFETENSORS_C_API int safetensors_options_set_policy(safetensors_options* options, int policy);
/** Overrides one cap of the policy's defaults. Errors: INVALID_ARGUMENT for an unknown limit. */
SAFETENSORS_C_API int safetensors_options_set_limit(safetensors_options* options, int limit, uint64_t value);

/* ---- Opening ------------------------------------------------------------------------- */

/** An open, validated SafeTensors file (or header). Immutable; free with safetensors_close. */
typedef struct safetensors_file safetensors_file;

/** Opens and validates a file (all checks; the data is not read). On failure *out is NULL
 *  and the status is the file's verdict, with message, offset and tensor in the last error;
 *  a file of another format gets the CLI's words for it ("this is a GGUF file, not SafeTensors"). */
SAFETENSORS_C_API int safetensors_open(const char* path, const safetensors_options* options, safetensors_file** out);
/** As safetensors_open for a whole file in memory. Not copied: `data` must outlive *out. */
SAFETENSORS_C_API int safetensors_open_buffer(const void* data, size_t size, const safetensors_options* options,
                                              safetensors_file** out);
/** Validates a header alone: `data` holds the first `size` bytes of a file of `file_size`
 *  bytes, at least 8 + N (N from the length prefix; safetensors_header_length tells it).
 *  Tensors and metadata can be listed, nothing read. The bytes are not kept. */
SAFETENSORS_C_API int safetensors_open_header(const void* data, size_t size, uint64_t file_size,
                                              const safetensors_options* options, safetensors_file** out);
/** Reads the length prefix: N from the first 8 bytes (`size` >= 8) of a file of `file_size`
 *  bytes, with the checks of stages 1-3 (HEADER_TOO_SMALL, HEADER_TOO_LARGE,
 *  INVALID_HEADER_LENGTH). */
SAFETENSORS_C_API int safetensors_header_length(const void* data, size_t size, uint64_t file_size,
                                                const safetensors_options* options, uint64_t* header_length);
/** Opens a file by URL through the library's location door (location.h): a `file://` URL is
 *  its local file, as safetensors_open; a scheme no store provider serves (this library links
 *  no HTTP client: http(s) URLs) is UNSUPPORTED; text that is not a URL is INVALID_ARGUMENT. */
SAFETENSORS_C_API int safetensors_open_url(const char* url, const safetensors_options* options, safetensors_file** out);
SAFETENSORS_C_API void safetensors_close(safetensors_file* file);

/** Layout: N (header length, padding included), the file offset of the data buffer (8 + N),
 *  the bytes covered by tensors, and the file's size. Any pointer may be NULL. */
SAFETENSORS_C_API int safetensors_file_layout(const safetensors_file* file, uint64_t* header_length,
                                              uint64_t* data_start, uint64_t* data_size, uint64_t* file_size);
/** Lenient mode's findings that did not make the file invalid. */
SAFETENSORS_C_API int safetensors_warning_count(const safetensors_file* file, size_t* count);
/** A warning's message, and its offset when it has one (*has_offset 0 or 1; may be NULL). */
SAFETENSORS_C_API int safetensors_warning_at(const safetensors_file* file, size_t index, const char** message,
                                             int* has_offset, uint64_t* offset);

/* ---- Tensors ------------------------------------------------------------------------- */

/** Tensors are numbered 0 .. count-1 in file order (by data offset). */
SAFETENSORS_C_API int safetensors_tensor_count(const safetensors_file* file, size_t* count);
/** The index of a tensor by exact name. Errors: TENSOR_NOT_FOUND. */
SAFETENSORS_C_API int safetensors_tensor_find(const safetensors_file* file, const char* name, size_t* index);
/** Its name, NUL-terminated (a name may contain NUL: `length` tells the bytes; may be NULL). */
SAFETENSORS_C_API int safetensors_tensor_name(const safetensors_file* file, size_t index, const char** name,
                                              size_t* length);
SAFETENSORS_C_API int safetensors_tensor_dtype(const safetensors_file* file, size_t index, int* dtype);
/** Its shape: `rank` dimensions at *dims (*dims may be NULL when rank is 0). */
SAFETENSORS_C_API int safetensors_tensor_shape(const safetensors_file* file, size_t index, const uint64_t** dims,
                                               size_t* rank);
/** data_offsets [begin, end), relative to the data buffer (add data_start for file offsets);
 *  either pointer may be NULL. */
SAFETENSORS_C_API int safetensors_tensor_offsets(const safetensors_file* file, size_t index, uint64_t* begin,
                                                 uint64_t* end);
/** Elements (product of the shape; 1 for a scalar). */
SAFETENSORS_C_API int safetensors_tensor_element_count(const safetensors_file* file, size_t index, uint64_t* count);
/** Copies the tensor's bytes into `dst`, whose `size` must equal end - begin.
 *  Errors: INVALID_ARGUMENT (size), IO, UNSUPPORTED for a header-only handle. */
SAFETENSORS_C_API int safetensors_tensor_read(const safetensors_file* file, size_t index, void* dst, size_t size);
/** Decodes the tensor to float32 into `dst` of exactly `count` = element count floats.
 *  Every dtype but C64 (INVALID_ARGUMENT: decode its bytes as F32 pairs). */
SAFETENSORS_C_API int safetensors_tensor_read_f32(const safetensors_file* file, size_t index, float* dst, size_t count);

/* ---- Slices -------------------------------------------------------------------------- */

/** A planned numpy-style slice of one tensor. Refers to its file, which must outlive it. */
typedef struct safetensors_slice safetensors_slice;

/** Plans `spec` ("0:8, ::2, -1", "...", "" = everything; numpy semantics as
 *  safetensors/slice.h and docs/checkpoints.md describe).
 *  Errors: INVALID_SLICE, MISALIGNED_SLICE, LIMIT_EXCEEDED. */
SAFETENSORS_C_API int safetensors_slice_new(const safetensors_file* file, size_t index, const char* spec,
                                            safetensors_slice** out);
SAFETENSORS_C_API void safetensors_slice_free(safetensors_slice* slice);
/** The output's shape (indexed dimensions dropped). */
SAFETENSORS_C_API int safetensors_slice_shape(const safetensors_slice* slice, const uint64_t** dims, size_t* rank);
SAFETENSORS_C_API int safetensors_slice_dtype(const safetensors_slice* slice, int* dtype);
SAFETENSORS_C_API int safetensors_slice_byte_size(const safetensors_slice* slice, uint64_t* bytes);
SAFETENSORS_C_API int safetensors_slice_element_count(const safetensors_slice* slice, uint64_t* count);
/** Copies the slice's bytes, row-major, into `dst` of exactly byte_size bytes. */
SAFETENSORS_C_API int safetensors_slice_read(const safetensors_slice* slice, void* dst, size_t size);
/** Decodes the slice to float32 into `dst` of exactly element_count floats. */
SAFETENSORS_C_API int safetensors_slice_read_f32(const safetensors_slice* slice, float* dst, size_t count);

/** The slice's byte ranges in output order, merged where contiguous, as absolute file offsets:
 *  their bytes back to back are what safetensors_slice_read copies. With them a header-only
 *  handle's slice can be read by the caller (a browser's File.slice) and decoded with
 *  safetensors_decode_f32. */
SAFETENSORS_C_API int safetensors_slice_range_count(const safetensors_slice* slice, size_t* count);
SAFETENSORS_C_API int safetensors_slice_range_at(const safetensors_slice* slice, size_t index, uint64_t* offset,
                                                 uint64_t* length);

/* ---- Metadata ------------------------------------------------------------------------ */

/** Entries of `__metadata__` (0 when absent), sorted by key. */
SAFETENSORS_C_API int safetensors_metadata_count(const safetensors_file* file, size_t* count);
/** Entry `index`: key and value, NUL-terminated, with their byte lengths (may be NULL). */
SAFETENSORS_C_API int safetensors_metadata_at(const safetensors_file* file, size_t index, const char** key,
                                              size_t* key_length, const char** value, size_t* value_length);
/** The value of `key`, or *value = NULL when there is no such key (not an error). */
SAFETENSORS_C_API int safetensors_metadata_get(const safetensors_file* file, const char* key, const char** value,
                                               size_t* value_length);

/* ---- Element conversion -------------------------------------------------------------- */

/** Decodes `src_size` bytes of packed `dtype` elements into `count` floats; `src_size` must be
 *  exactly the bytes of `count` elements (docs/dtypes.md has every format's rules). */
SAFETENSORS_C_API int safetensors_decode_f32(int dtype, const void* src, size_t src_size, float* dst, size_t count);
/** Encodes `count` floats as `dtype` into `dst_size` bytes (round to nearest even).
 *  flags: SAFETENSORS_ENCODE_CHECK_RANGE (integer targets: out-of-range is an error instead
 *  of clamping), SAFETENSORS_ENCODE_SATURATE (F8 overflow gives the largest finite value). */
#define SAFETENSORS_ENCODE_CHECK_RANGE 1u
#define SAFETENSORS_ENCODE_SATURATE 2u
SAFETENSORS_C_API int safetensors_encode_f32(int dtype, const float* src, size_t count, void* dst, size_t dst_size,
                                             unsigned flags);

/* ---- Statistics ---------------------------------------------------------------------- */

/** Summary of values: min, max, mean and (population) std cover the finite values only; with
 *  none they are NaN. NaN and infinities are counted instead. */
typedef struct safetensors_stats {
  uint64_t count; /**< all values */
  uint64_t nan;
  uint64_t pos_inf;
  uint64_t neg_inf;
  uint64_t zeros; /**< +0 and -0 */
  double min;
  double max;
  double mean;
  double std;
} safetensors_stats;

/** The statistics of `count` floats (as the CLI's `stats` computes them). */
SAFETENSORS_C_API int safetensors_stats_f32(const float* values, size_t count, safetensors_stats* out);

/* ---- Other formats -------------------------------------------------------------------- */

/** Names the format of a file from its first bytes (up to 512; fewer is fine): "SafeTensors"
 *  (a plausible length prefix and '{', not a verdict), "GGUF", "PyTorch (zip)", "NumPy .npz",
 *  "zip", "pickle", "NumPy .npy", "HDF5" or "unknown". Never NULL; a static string. */
SAFETENSORS_C_API const char* safetensors_sniff_format(const void* data, size_t size);

/* ---- MLX quantized layers (docs/mlx.md) ----------------------------------------------- */

/** The quantized layers of one file: `P.weight` (U32) beside `P.scales` (and `P.biases`). */
typedef struct safetensors_mlx safetensors_mlx;

enum safetensors_mlx_mode {
  SAFETENSORS_MLX_AFFINE = 0,
  SAFETENSORS_MLX_MXFP4 = 1,
  SAFETENSORS_MLX_MXFP8 = 2,
  SAFETENSORS_MLX_NVFP4 = 3
};

/** One quantized layer. Tensor numbers are those of the file; `path` lives as long as the
 *  handle. The logical weight is `rows` x `cols` (its shape's leading axes multiplied). */
typedef struct safetensors_mlx_layer {
  const char* path; /**< module path P */
  size_t weight;
  size_t scales;
  size_t biases; /**< SIZE_MAX when there are none (fp modes) */
  int mode;      /**< safetensors_mlx_mode */
  unsigned bits;
  unsigned group_size;
  int scale_dtype; /**< safetensors_dtype of scales (and biases) */
  uint64_t rows;
  uint64_t cols;
  int ambiguous; /**< 1 when only the shapes were left and several (bits, group size) fit */
} safetensors_mlx_layer;

/** Finds the quantized layers of an open file (header-only handles too), their parameters
 *  from `__metadata__` and the shapes. Errors: INVALID_ARGUMENT naming the tensor whose shape
 *  or dtype does not fit. */
SAFETENSORS_C_API int safetensors_mlx_describe(const safetensors_file* file, safetensors_mlx** out);
SAFETENSORS_C_API void safetensors_mlx_free(safetensors_mlx* mlx);
SAFETENSORS_C_API int safetensors_mlx_layer_count(const safetensors_mlx* mlx, size_t* count);
SAFETENSORS_C_API int safetensors_mlx_layer_at(const safetensors_mlx* mlx, size_t index, safetensors_mlx_layer* out);
/** Dequantizes rows [first_row, first_row + row_count) of layer `index` (MLX-CPU rounding)
 *  into `count` = row_count * cols floats. `weight`, `scales` and `biases` hold those rows'
 *  bytes of each tensor (row r of a tensor is bytes [r * S / rows, (r + 1) * S / rows) of
 *  its S bytes); `biases` is NULL with size 0 for fp modes. The handle keeps what it needs:
 *  the file may be closed. Errors: INVALID_ARGUMENT (rows out of range, sizes). */
SAFETENSORS_C_API int safetensors_mlx_dequantize_f32(const safetensors_mlx* mlx, size_t index, uint64_t first_row,
                                                     uint64_t row_count, const void* weight, size_t weight_size,
                                                     const void* scales, size_t scales_size, const void* biases,
                                                     size_t biases_size, float* dst, size_t count);

/* ---- Writing ------------------------------------------------------------------------- */

/** Collects tensors (caller's buffers, not copied: they must live until the write) and
 *  metadata, then writes them in the library's deterministic layout. */
typedef struct safetensors_writer safetensors_writer;

SAFETENSORS_C_API int safetensors_writer_new(safetensors_writer** out);
SAFETENSORS_C_API void safetensors_writer_free(safetensors_writer* writer);
/** Adds a tensor; `size` must be the bytes of its shape and dtype (INVALID_ARGUMENT naming the
 *  tensor otherwise). Refused when added, with the code a reader gives the file it would make:
 *  a repeated name (DUPLICATE_KEY) and the name `__metadata__` (INVALID_HEADER_DESERIALIZATION). */
SAFETENSORS_C_API int safetensors_writer_add_tensor(safetensors_writer* writer, const char* name, int dtype,
                                                    const uint64_t* dims, size_t rank, const void* data, size_t size);
/** Sets a `__metadata__` entry (replacing one of the same key). Once called, the header has a
 *  `__metadata__` object; without it there is none. */
SAFETENSORS_C_API int safetensors_writer_set_metadata(safetensors_writer* writer, const char* key, const char* value);
/** The data buffer starts at a multiple of this (a power of two, at least 8; default 8). */
SAFETENSORS_C_API int safetensors_writer_set_alignment(safetensors_writer* writer, uint64_t alignment);
/** Writes `path` atomically: a temporary beside it, fsynced and renamed over it; on any
 *  error the target is untouched. The writer can be written again. */
SAFETENSORS_C_API int safetensors_writer_write(const safetensors_writer* writer, const char* path);

/* ---- Pipelines ----------------------------------------------------------------------- */

/** The library's conversion pipeline (docs/formats.md): SafeTensors (file, sharded directory
 *  or index), PyTorch .pt/.bin (no code from it runs), NumPy .npy/.npz and GGUF in; SafeTensors
 *  (file or sharded directory), .npz, .npy and GGUF out; cast, extract, merge and shard are
 *  the same call with options. Not in the WebAssembly build. */
typedef struct safetensors_convert_options safetensors_convert_options;
/** Told the bytes done and the total; return 0 to cancel (SAFETENSORS_ERR_CANCELLED, nothing
 *  left at the output), anything else to go on. */
typedef int (*safetensors_progress_fn)(uint64_t done, uint64_t total, void* user);

SAFETENSORS_C_API int safetensors_convert_options_new(safetensors_convert_options** out);
SAFETENSORS_C_API void safetensors_convert_options_free(safetensors_convert_options* options);
/** Sets an option by name, as text: "to" (safetensors, sharded, npz, npy, gguf), "dtype"
 *  (cast floating tensors), "saturate", "alignment", "max_shard_size" ("5GB"), "prefix",
 *  "replace_input" (the output may be the input), "one_file_output" (a directory there is
 *  refused, not a sharded output), "key", "shared" (keep, dedup), "strict",
 *  "compress", "hash_long_names", "max_output_size" (the output budget, "20GB": a plan above it
 *  is refused with SAFETENSORS_ERR_LIMIT_EXCEEDED before anything is written; by default 64
 *  times the input's size, at least 1 GiB), "max_expanded_size" and "max_ratio" (.npz input's
 *  zip-bomb limits); repeatable: "only", "exclude", "cast_only", "cast_exclude",
 *  "remove_metadata", "rename" ("FROM=TO"), "set_metadata" ("KEY=VALUE"). Booleans: "1"/"0".
 *  An option set (a boolean set to "1") that does not apply to the input or the output is
 *  refused by safetensors_convert, naming it as "option 'key'". */
SAFETENSORS_C_API int safetensors_convert_options_set(safetensors_convert_options* options, const char* name,
                                                      const char* value);
SAFETENSORS_C_API int safetensors_convert_options_set_progress(safetensors_convert_options* options,
                                                               safetensors_progress_fn progress, void* user);
/** Converts `inputs` (one, or several concatenated) into `output`; `options` may be NULL. The
 *  output appears complete or not at all. */
SAFETENSORS_C_API int safetensors_convert(const char* const* inputs, size_t input_count, const char* output,
                                          const safetensors_convert_options* options);

/* ---- Pickle verdict (PyTorch) ------------------------------------------------------- */

/** What a PyTorch checkpoint's pickles name outside the allowlist, read without running
 *  anything, also for a file safetensors_convert refuses (docs/formats.md). Not in the
 *  WebAssembly build. */
typedef struct safetensors_pickle_verdict safetensors_pickle_verdict;
enum safetensors_pickle_verdict_kind {
  SAFETENSORS_PICKLE_ALLOWLISTED = 0,   /* only the globals a state_dict needs */
  SAFETENSORS_PICKLE_INERT_OBJECTS = 1, /* other globals, never loaded: skipped; refused by "strict" */
  SAFETENSORS_PICKLE_RUNS_CODE = 2      /* a global on the code-execution list: always refused */
};
/** Reads `path` (a .pt/.bin file). Fails only for a NULL argument (or UNSUPPORTED without the
 *  converters): a file that does not open is described by safetensors_pickle_verdict_refusal. */
SAFETENSORS_C_API int safetensors_pickle_verdict_open(const char* path, safetensors_pickle_verdict** out);
SAFETENSORS_C_API void safetensors_pickle_verdict_free(safetensors_pickle_verdict* verdict);
/** A safetensors_pickle_verdict_kind; -1 for NULL. */
SAFETENSORS_C_API int safetensors_pickle_verdict_kind(const safetensors_pickle_verdict* verdict);
/** The status opening the file for conversion gives: SAFETENSORS_OK, SAFETENSORS_ERR_CODE_EXECUTION
 *  for a file that tries to run code, ...; `text` (may be NULL) gets its one-line report ("" when
 *  it opens), valid as long as the verdict. */
SAFETENSORS_C_API int safetensors_pickle_verdict_refusal(const safetensors_pickle_verdict* verdict, const char** text);
/** The number of globals outside the allowlist the pickles name. */
SAFETENSORS_C_API size_t safetensors_pickle_verdict_global_count(const safetensors_pickle_verdict* verdict);
/** Global `index`, in the order first named: its dotted name ("posix.system", valid as long as
 *  the verdict), 1 when it is on the code-execution list, and the byte offset, in its pickle, of
 *  the first opcode naming it. Out pointers may be NULL. */
SAFETENSORS_C_API int safetensors_pickle_verdict_global(const safetensors_pickle_verdict* verdict, size_t index,
                                                        const char** name, int* runs_code, uint64_t* offset);

/* ---- Describing a file (what `safetensors inspect` prints) --------------------------- */

/** A PyTorch, NumPy or GGUF file as `safetensors inspect` describes it: the rows of the library's
 *  format table (safetensors/pipeline/format_table.h), the same for the CLI and Python. Not in the
 *  WebAssembly build. */
typedef struct safetensors_description safetensors_description;
/** Describes `path` (nothing in a PyTorch file runs). A pickle that tries to run code is still
 *  described, by its verdict's notes; safetensors_description_refusal says why it does not open.
 *  Errors: IO, UNSUPPORTED for a file of no format the table describes (a SafeTensors file: open
 *  it with safetensors_open), and the format's own errors. */
SAFETENSORS_C_API int safetensors_describe(const char* path, safetensors_description** out);
SAFETENSORS_C_API void safetensors_description_free(safetensors_description* description);
/** The format table's id ("pytorch", "npz", "npy", "gguf"), inspect's "format:" line and the
 *  title of the table's last column. Out pointers may be NULL; the strings live as long as the
 *  description. */
SAFETENSORS_C_API int safetensors_description_format(const safetensors_description* description, const char** id,
                                                     const char** format, const char** extra_title);
SAFETENSORS_C_API size_t safetensors_description_tensor_count(const safetensors_description* description);
/** Tensor `index`, in file order: its name, its type ("F32", or the format's own: "Q8_0"), its
 *  `rank` dimensions, its bytes and elements, and the table's last column (an offset, a descr,
 *  notes). Out pointers may be NULL; what they point to lives as long as the description. */
SAFETENSORS_C_API int safetensors_description_tensor(const safetensors_description* description, size_t index,
                                                     const char** name, const char** dtype, const uint64_t** dims,
                                                     size_t* rank, uint64_t* bytes, uint64_t* elements,
                                                     const char** extra);
/** Where tensor `index`'s bytes lie in the file when they are SafeTensors bytes as stored
 *  (uncompressed, one C-order run, little-endian): the absolute `offset`, the `length` and the
 *  SafeTensors `dtype` ("F32") to decode them as (GGUF F32/F16/BF16/F64/integer tensors, .npy
 *  arrays and stored .npz members in C order, a zip checkpoint's contiguous tensors in stored
 *  storages). Otherwise SAFETENSORS_ERR_UNSUPPORTED, the last error saying why in a few words
 *  ("quantized type Q8_0", "a deflated .npz member", "a strided view"). Out pointers may be NULL. */
SAFETENSORS_C_API int safetensors_description_tensor_data(const safetensors_description* description, size_t index,
                                                          uint64_t* offset, uint64_t* length, const char** dtype);
SAFETENSORS_C_API size_t safetensors_description_metadata_count(const safetensors_description* description);
/** Metadata entry `index`: its key (raw) and its value, made printable (escaped, cut to one line). */
SAFETENSORS_C_API int safetensors_description_metadata(const safetensors_description* description, size_t index,
                                                       const char** key, const char** value);
SAFETENSORS_C_API size_t safetensors_description_note_count(const safetensors_description* description);
/** Note `index`: skipped entries, the pickle verdict and each global it names. */
SAFETENSORS_C_API int safetensors_description_note(const safetensors_description* description, size_t index,
                                                   const char** note);
/** SAFETENSORS_OK when the file opens, else the status opening it gives (SAFETENSORS_ERR_CODE_EXECUTION
 *  for a pickle that tries to run code); `text` (may be NULL) gets its one-line report ("" when it
 *  opens), valid as long as the description. */
SAFETENSORS_C_API int safetensors_description_refusal(const safetensors_description* description, const char** text);

/** The size of the file the writer would write. */
SAFETENSORS_C_API int safetensors_writer_file_size(const safetensors_writer* writer, uint64_t* size);
/** Serializes into `dst` of exactly file_size bytes. */
SAFETENSORS_C_API int safetensors_writer_serialize(const safetensors_writer* writer, void* dst, size_t size);

#ifdef __cplusplus
}
#endif

#endif /* SAFETENSORS_SAFETENSORS_C_H */
