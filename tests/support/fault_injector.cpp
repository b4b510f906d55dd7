// SPDX-License-Identifier: Apache-2.0
// The fault-injecting system-call table: each entry asks the active injector, then
// forwards to the real call.
#include "support/fault_injector.h"

#include <sys/mman.h>

#include <algorithm>
#include <cerrno>

namespace st_test {
namespace {

fault_injector* active = nullptr;

int decide(sys_call c, std::size_t* n = nullptr) { return active != nullptr ? active->next(c, n) : 0; }

const safetensors::detail::sys::table& real() { return safetensors::detail::sys::real(); }

/// Sets errno and returns the call's failure value.
template <class R>
R fail(int err, R value) {
  errno = err;
  return value;
}

int fake_open(const char* path, int flags, mode_t mode) {
  if (int e = decide(sys_call::open)) return fail(e, -1);
  return real().open(path, flags, mode);
}
int fake_close(int fd) {
  int e = decide(sys_call::close);
  int r = real().close(fd);  // the descriptor is released either way, as on Linux
  if (e != 0) return fail(e, -1);
  return r;
}
int fake_fstat(int fd, struct stat* st) {
  if (int e = decide(sys_call::fstat)) return fail(e, -1);
  return real().fstat(fd, st);
}
ssize_t fake_pread(int fd, void* buf, std::size_t n, off_t offset) {
  if (int e = decide(sys_call::pread, &n)) return fail(e, -1);
  const ssize_t r = real().pread(fd, buf, n, offset);
  if (active != nullptr) active->add_bytes(sys_call::pread, r);
  return r;
}
ssize_t fake_read(int fd, void* buf, std::size_t n) {
  if (int e = decide(sys_call::read, &n)) return fail(e, -1);
  const ssize_t r = real().read(fd, buf, n);
  if (active != nullptr) active->add_bytes(sys_call::read, r);
  return r;
}
ssize_t fake_pwrite(int fd, const void* buf, std::size_t n, off_t offset) {
  if (int e = decide(sys_call::pwrite, &n)) return fail(e, -1);
  const ssize_t r = real().pwrite(fd, buf, n, offset);
  if (active != nullptr) active->add_bytes(sys_call::pwrite, r);
  return r;
}
int fake_fsync(int fd) {
  if (int e = decide(sys_call::fsync)) return fail(e, -1);
  return real().fsync(fd);
}
int fake_ftruncate(int fd, off_t size) {
  if (int e = decide(sys_call::ftruncate)) return fail(e, -1);
  return real().ftruncate(fd, size);
}
int fake_rename(const char* from, const char* to) {
  if (int e = decide(sys_call::rename)) return fail(e, -1);
  return real().rename(from, to);
}
int fake_unlink(const char* path) {
  if (int e = decide(sys_call::unlink)) return fail(e, -1);
  return real().unlink(path);
}
void* fake_mmap(void* addr, std::size_t len, int prot, int flags, int fd, off_t offset) {
  if (int e = decide(sys_call::mmap)) return fail(e, MAP_FAILED);
  return real().mmap(addr, len, prot, flags, fd, offset);
}
int fake_munmap(void* addr, std::size_t len) {
  int e = decide(sys_call::munmap);
  int r = real().munmap(addr, len);
  if (e != 0) return fail(e, -1);
  return r;
}

int fake_sync_file_range(int fd, off_t offset, off_t n, unsigned flags) {
  if (int e = decide(sys_call::sync_file_range)) return fail(e, -1);
  return real().sync_file_range(fd, offset, n, flags);
}

int fake_set_direct_io(int fd, bool on) {
  if (int e = decide(sys_call::set_direct_io)) return fail(e, -1);
  return real().set_direct_io(fd, on);
}

const safetensors::detail::sys::table fake_table = {
    fake_open,      fake_close,  fake_fstat,  fake_pread, fake_read,   fake_pwrite,          fake_fsync,
    fake_ftruncate, fake_rename, fake_unlink, fake_mmap,  fake_munmap, fake_sync_file_range, fake_set_direct_io,
};

}  // namespace

const char* sys_call_name(sys_call c) {
  static const char* const names[] = {"open",   "close",  "fstat",           "pread",        "read",
                                      "pwrite", "fsync",  "ftruncate",       "rename",       "unlink",
                                      "mmap",   "munmap", "sync_file_range", "set_direct_io"};
  return names[static_cast<std::size_t>(c)];
}

fault_injector::fault_injector(std::vector<fault> faults) : faults_(std::move(faults)), override_(fake_table) {
  active = this;
}

fault_injector::~fault_injector() { active = nullptr; }

void fault_injector::fail_nth_call(std::uint64_t k, int err, std::vector<sys_call> spared) {
  nth_ = k;
  nth_err_ = err;
  spared_ = std::move(spared);
}

int fault_injector::next(sys_call c, std::size_t* n) {
  const std::uint64_t count = ++counts_[static_cast<std::size_t>(c)];
  if (std::find(spared_.begin(), spared_.end(), c) == spared_.end() && ++total_ == nth_) {
    ++injected_;
    return nth_err_;
  }
  for (const fault& f : faults_) {
    if (f.call != c || count < f.first || count - f.first >= f.times) continue;
    ++injected_;
    if (f.err != 0) return f.err;
    if (n != nullptr) *n = std::min(*n, f.short_to);
  }
  return 0;
}

std::vector<std::string> list_dir(const std::filesystem::path& dir) {
  std::vector<std::string> names;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) names.push_back(entry.path().filename());
  std::sort(names.begin(), names.end());
  return names;
}

std::size_t open_fd_count() {
  std::size_t n = 0;
  for ([[maybe_unused]] const auto& entry : std::filesystem::directory_iterator("/proc/self/fd")) ++n;
  return n;
}

}  // namespace st_test
