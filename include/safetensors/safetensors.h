// SPDX-License-Identifier: Apache-2.0
/// \file safetensors.h
/// Everything of the core library (safetensors::safetensors) in one include. The components'
/// headers are included one by one, with their libraries: mlx_quant.h and mlx_checkpoint.h
/// (safetensors::mlx), stats.h (safetensors::stats), sha256.h (safetensors::sha256), and
/// formats/ and pipeline/ (safetensors::formats).
#pragma once

#include "safetensors/atomic_file.h"         // IWYU pragma: export
#include "safetensors/checkpoint.h"          // IWYU pragma: export
#include "safetensors/checkpoint_index.h"    // IWYU pragma: export
#include "safetensors/checkpoint_store.h"    // IWYU pragma: export
#include "safetensors/checkpoint_verify.h"   // IWYU pragma: export
#include "safetensors/checkpoint_write.h"    // IWYU pragma: export
#include "safetensors/chunk_sink.h"          // IWYU pragma: export
#include "safetensors/cleanup.h"             // IWYU pragma: export
#include "safetensors/convert.h"             // IWYU pragma: export
#include "safetensors/dtype.h"               // IWYU pragma: export
#include "safetensors/error.h"               // IWYU pragma: export
#include "safetensors/file.h"                // IWYU pragma: export
#include "safetensors/glob.h"                // IWYU pragma: export
#include "safetensors/hasher.h"              // IWYU pragma: export
#include "safetensors/header.h"              // IWYU pragma: export
#include "safetensors/json_keys.h"           // IWYU pragma: export
#include "safetensors/json_text.h"           // IWYU pragma: export
#include "safetensors/lifetimebound.h"       // IWYU pragma: export
#include "safetensors/loader.h"              // IWYU pragma: export
#include "safetensors/location.h"            // IWYU pragma: export
#include "safetensors/minifloat.h"           // IWYU pragma: export
#include "safetensors/multi_range_reader.h"  // IWYU pragma: export
#include "safetensors/output_path.h"         // IWYU pragma: export
#include "safetensors/policy.h"              // IWYU pragma: export
#include "safetensors/printable_text.h"      // IWYU pragma: export
#include "safetensors/range_reader.h"        // IWYU pragma: export
#include "safetensors/readonly_file.h"       // IWYU pragma: export
#include "safetensors/region_file.h"         // IWYU pragma: export
#include "safetensors/slice.h"               // IWYU pragma: export
#include "safetensors/sniff.h"               // IWYU pragma: export
#include "safetensors/try.h"                 // IWYU pragma: export
#include "safetensors/writer.h"              // IWYU pragma: export
