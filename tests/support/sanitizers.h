// SPDX-License-Identifier: Apache-2.0
// Which sanitizer this test binary runs under, for g++ (__SANITIZE_*__) and clang
// (__has_feature) alike: tests that cap address space or replace operator new skip or
// adapt under them. ST_TEST_UNDER_ASAN, ST_TEST_UNDER_SANITIZER: 0 or 1.
#pragma once

#if defined(__SANITIZE_ADDRESS__)
#define ST_TEST_UNDER_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define ST_TEST_UNDER_ASAN 1
#endif
#endif
#ifndef ST_TEST_UNDER_ASAN
#define ST_TEST_UNDER_ASAN 0
#endif

#if ST_TEST_UNDER_ASAN || defined(__SANITIZE_THREAD__)
#define ST_TEST_UNDER_SANITIZER 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer) || __has_feature(memory_sanitizer)
#define ST_TEST_UNDER_SANITIZER 1
#endif
#endif
#ifndef ST_TEST_UNDER_SANITIZER
#define ST_TEST_UNDER_SANITIZER 0
#endif
