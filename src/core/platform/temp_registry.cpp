// SPDX-License-Identifier: Apache-2.0
// Tables of paths with a per-slot state word: claiming a slot and publishing its path are two
// atomic steps, so a handler interrupting either sees a slot as free or as complete, never
// half-written.
#include "platform/temp_registry.h"

#include <pthread.h>
#include <signal.h>
#include <unistd.h>

#include <array>
#include <atomic>
#include <cstring>
#include <limits>
#include <new>

#include "safetensors/cleanup.h"

namespace safetensors {
namespace detail {
namespace {

enum slot_state : int { free_slot = 0, filling = 1, live = 2 };

constexpr std::size_t slots_per_block = 64;
constexpr std::size_t max_path = 4096;

enum slot_kind : int { temporary_file = 0, created_directory = 1 };

struct slot {
  std::atomic<int> state{free_slot};
  int kind = temporary_file;  // written before the state is published as live
  char path[max_path]{};
};

// Blocks of slots in a chain that only grows: the first is static, the others are allocated
// when a write keeps more than 64 temporaries (a checkpoint of many shards holds every shard's
// until all are written) and are never freed, so the handler can walk the chain at any time.
struct block {
  std::array<slot, slots_per_block> slots{};
  std::atomic<block*> next{nullptr};
};

// constinit: zeros in .bss, no code at start-up. A run-time initializer would write the state
// word of every slot, touching all 64 pages (256 KiB) of every process at its start.
constinit block first_block{};

static_assert(std::atomic<int>::is_always_lock_free, "the signal handler needs lock-free state words");
static_assert(std::atomic<block*>::is_always_lock_free, "the signal handler walks the chain");

/// Calls `f` on each live slot of `kind`. Async-signal-safe: loads and the caller's work only.
template <class F>
void for_each_live_slot(slot_kind kind, F&& f) noexcept {
  for (auto* b = &first_block; b != nullptr; b = b->next.load(std::memory_order_acquire)) {
    for (auto& s : b->slots) {
      if (s.state.load(std::memory_order_acquire) == live && s.kind == kind) f(s);
    }
  }
}

/// The block after `b`, allocated and linked when there is none yet; nullptr without memory.
block* next_block(block& b) noexcept {
  block* next = b.next.load(std::memory_order_acquire);
  if (next != nullptr) return next;
  auto* fresh = new (std::nothrow) block{};
  if (fresh == nullptr) return nullptr;
  block* expected = nullptr;
  if (b.next.compare_exchange_strong(expected, fresh, std::memory_order_acq_rel)) return fresh;
  delete fresh;  // another thread linked one first
  return expected;
}

int register_path(const std::string& path, slot_kind kind) noexcept {
  if (path.size() >= max_path) return -1;
  std::size_t base = 0;
  for (block* b = &first_block; b != nullptr; b = next_block(*b), base += slots_per_block) {
    for (std::size_t i = 0; i < slots_per_block; ++i) {
      slot& s = b->slots[i];
      int expected = free_slot;
      if (!s.state.compare_exchange_strong(expected, filling)) continue;
      std::memcpy(s.path, path.c_str(), path.size() + 1);
      s.kind = kind;
      s.state.store(live, std::memory_order_release);
      const std::size_t index = base + i;
      return index <= static_cast<std::size_t>(std::numeric_limits<int>::max()) ? static_cast<int>(index) : -1;
    }
  }
  return -1;
}

}  // namespace

int register_temporary(const std::string& path) noexcept { return register_path(path, temporary_file); }

void unregister_temporary(int index) noexcept {
  if (index < 0) return;
  auto n = static_cast<std::size_t>(index);
  block* b = &first_block;
  for (; b != nullptr && n >= slots_per_block; n -= slots_per_block) b = b->next.load(std::memory_order_acquire);
  if (b != nullptr) b->slots[n].state.store(free_slot, std::memory_order_release);
}

signals_held::signals_held() noexcept : previous_() {
  sigset_t held;
  sigemptyset(&held);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&held, sig);
  (void)::pthread_sigmask(SIG_BLOCK, &held, &previous_);
}

signals_held::~signals_held() { (void)::pthread_sigmask(SIG_SETMASK, &previous_, nullptr); }

}  // namespace detail

int remember_created_directory(const std::string& path) noexcept {
  return detail::register_path(path, detail::created_directory);
}

void forget_created_directory(int handle) noexcept { detail::unregister_temporary(handle); }

void remove_temporary_files() noexcept {
  // unlink(2) is async-signal-safe; a path already renamed or removed gives ENOENT, harmless.
  detail::for_each_live_slot(detail::temporary_file, [](detail::slot& s) { (void)::unlink(s.path); });
  // Then the directories, emptied of their temporaries: rmdir(2) removes only an empty one,
  // and a parent goes on a later round, once its child is gone.
  for (bool removed = true; removed;) {
    removed = false;
    detail::for_each_live_slot(detail::created_directory, [&](detail::slot& s) {
      if (::rmdir(s.path) != 0) return;
      s.state.store(detail::free_slot, std::memory_order_release);
      removed = true;
    });
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
