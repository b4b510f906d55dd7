// SPDX-License-Identifier: Apache-2.0
/// \file cleanup.h
/// Removing the temporary files of unfinished writes when the process is interrupted.
///
/// Every output (write_file, stream_writer, write_checkpoint) is written to a hidden
/// temporary beside its target (`.NAME.tmp-PID-N`) and renamed over it when complete.
/// Destructors remove the temporary of a failed write, but a signal that kills the process
/// runs no destructor: these functions cover that case.
#pragma once

#include <string>

namespace safetensors {

/// Unlinks the temporary file of every write in progress, then removes the directories
/// recorded by remember_created_directory that are left empty. Async-signal-safe (no
/// allocation, no locks): call it from your own SIGINT/SIGTERM handler. Paths over 4095
/// bytes are not tracked.
void remove_temporary_files() noexcept;

/// Records a directory created for an output being written, so that remove_temporary_files()
/// also removes it (only when empty: files someone else put there keep it). Returns a handle
/// for forget_created_directory, or -1 when it could not be recorded.
[[nodiscard]] int remember_created_directory(const std::string& path) noexcept;
/// The write finished (or its owner removed the directory): forgets a recorded directory.
void forget_created_directory(int handle) noexcept;

/// Installs handlers for SIGINT, SIGTERM and SIGHUP that call remove_temporary_files(),
/// then re-raise the signal with its default action, so the process still dies of it (a
/// shell sees 130 for Ctrl-C). For programs without handlers of their own, such as a CLI.
void remove_temporaries_on_signals() noexcept;

}  // namespace safetensors
