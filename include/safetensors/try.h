// SPDX-License-Identifier: Apache-2.0
/// \file try.h
/// Error propagation for long chains of fallible steps, such as the pickle machine's opcode
/// switch, where spelling out `if (!r) return std::move(r).err();` after every step would bury
/// the logic. Elsewhere the library writes that line out; these two macros are the only
/// shorthand for it, so a reader meets one propagation idiom.
#pragma once

#include <utility>

/// Evaluates `expr` (a `result<T>` or `status`); on failure, returns its error from the
/// enclosing function.
#define SAFETENSORS_TRY(expr)                                                                        \
  do {                                                                                               \
    if (auto safetensors_try_ = (expr); !safetensors_try_) return std::move(safetensors_try_).err(); \
  } while (0)

/// Declares `var` as the value of `expr` (a `result<T>`); on failure, returns its error from
/// the enclosing function.
#define SAFETENSORS_TRY_ASSIGN(var, expr)                    \
  auto var##_result_ = (expr);                               \
  if (!var##_result_) return std::move(var##_result_).err(); \
  auto var = std::move(var##_result_).value()
