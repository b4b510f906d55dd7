// SPDX-License-Identifier: Apache-2.0
/// \file safetensors.h
/// Everything of the core library in one include.
#pragma once

#include "safetensors/checkpoint.h" // IWYU pragma: export
#include "safetensors/convert.h" // IWYU pragma: export
#include "safetensors/dtype.h"   // IWYU pragma: export
#include "safetensors/error.h"   // IWYU pragma: export
#include "safetensors/file.h"    // IWYU pragma: export
#include "safetensors/header.h"  // IWYU pragma: export
#include "safetensors/loader.h"  // IWYU pragma: export
#include "safetensors/policy.h"  // IWYU pragma: export
#include "safetensors/slice.h"   // IWYU pragma: export
#include "safetensors/writer.h"  // IWYU pragma: export
