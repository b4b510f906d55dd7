// SPDX-License-Identifier: Apache-2.0
// A fixed table of paths with a per-slot state word: claiming a slot and publishing its
// path are two atomic steps, so a handler interrupting either sees a slot as free or as
// complete, never half-written.
#include "platform/temp_registry.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>

#include "safetensors/cleanup.h"

namespace safetensors {
namespace detail {
namespace {

enum slot_state : int { free_slot = 0, filling = 1, live = 2 };

constexpr std::size_t max_slots = 64;
constexpr std::size_t max_path = 4096;

struct slot {
  std::atomic<int> state{free_slot};
  char path[max_path]{};
};

// constinit: zeros in .bss, no code at start-up. A run-time initializer would write the state
// word of every slot, touching all 64 pages (256 KiB) of every process at its start.
constinit std::array<slot, max_slots> slots{};

static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free state words");

}  // namespace

int register_temporary(const std::string& path) noexcept {
  if (path.size() >= max_path) return -1;
  for (std::size_t i = 0; i < max_slots; ++i) {
    int expected = free_slot;
    if (!slots[i].state.compare_exchange_strong(expected, filling)) continue;
    std::memcpy(slots[i].path, path.c_str(), path.size() + 1);
    slots[i].state.store(live, std::memory_order_release);
    return static_cast<int>(i);
  }
  return -1;
}

void unregister_temporary(int slot) noexcept {
  if (slot >= 0 && static_cast<std::size_t>(slot) < max_slots) {
    slots[static_cast<std::size_t>(slot)].state.store(free_slot, std::memory_order_release);
  }
}

signals_held::signals_held() noexcept : previous_() {
  sigset_t held;
  sigemptyset(&held);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, sig);
  (void)::pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

signals_held::~signals_held() { (void)::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace detail

void remove_temporary_files() noexcept {
  for (auto& s : detail::slots) {
    // unlink(2) is async-signal-safe; a path already renamed or removed gives ENOENT, harmless.
    if (s.state.load(std::memory_order_acquire) == detail::live) (void)::unlink(s.path);
  }
}

namespace {

void on_fatal_signal(int sig) {
  remove_temporary_files();
  // SA_RESETHAND restored the default action and SA_NODEFER leaves the signal unblocked:
  // raising it again ends the process the way the signal would have.
  (void)::raise(sig);
}

}  // namespace

void remove_temporaries_on_signals() noexcept {
  struct sigaction action {};
  action.sa_handler = on_fatal_signal;
  sigemptyset(&action.sa_mask);
  action.sa_flags = static_cast<int>(SA_RESETHAND | SA_NODEFER);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) {
    struct sigaction previous {};
    // A signal the parent set to be ignored (nohup, background jobs) stays ignored.
    if (::sigaction(sig, nullptr, &previous) == 0 && previous.sa_handler == SIG_IGN) continue;
    (void)::sigaction(sig, &action, nullptr);
  }
}

}  // namespace safetensors
