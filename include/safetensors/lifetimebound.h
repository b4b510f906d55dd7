// SPDX-License-Identifier: Apache-2.0
/// SAFETENSORS_LIFETIMEBOUND: marks a returned view, span or reference as borrowing from the
/// object (or the parameter) it annotates, so clang warns when the result outlives it
/// (`-Wdangling`). Expands to nothing on compilers without the attribute.
#pragma once

#if defined(__has_cpp_attribute)
#if __has_cpp_attribute(clang::lifetimebound)
#define SAFETENSORS_LIFETIMEBOUND [[clang::lifetimebound]]
#elif __has_cpp_attribute(msvc::lifetimebound)
#define SAFETENSORS_LIFETIMEBOUND [[msvc::lifetimebound]]
#endif
#endif

#ifndef SAFETENSORS_LIFETIMEBOUND
#define SAFETENSORS_LIFETIMEBOUND
#endif
