// SPDX-License-Identifier: Apache-2.0
/// \file pickle_verdict.h
/// What a pickle names outside the allowlist, and the verdict drawn from it.
///
/// The restricted pickle machine (pickle.h) never imports a global. It records every global
/// the opcode stream names (GLOBAL, STACK_GLOBAL, INST) that is not on its allowlist, where,
/// and every call made on it or on what it made (REDUCE, NEWOBJ, NEWOBJ_EX, OBJ, INST, BUILD),
/// wherever the result goes afterwards (popped, overwritten, a dict key, an argument of a
/// tensor rebuild). From that, one of three verdicts:
///   - allowlisted: only the globals a state_dict needs, what `torch.load(weights_only=True)`
///     accepts;
///   - inert objects: also other globals (argparse.Namespace, pathlib.PosixPath, numpy
///     scalars, user classes), none on the code-execution list. They stay inert: what they
///     touch is skipped with a note; `strict` refuses the file (UnsafeContent), whatever key;
///   - runs code: a global on the code-execution list (os.system, builtins.eval, ...; the list
///     is in SECURITY.md) is named somewhere: the file is refused in every mode with
///     `error_code::code_execution`.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace safetensors::torch {

/// A global outside the allowlist that a pickle names (never imported).
struct pickle_global_use {
  std::string name;                     ///< "module.name" as the stream spells it: "posix.system"
  bool runs_code = false;               ///< on the code-execution list
  std::string pickle;                   ///< the pickle naming it: "archive/data.pkl", "the object pickle"
  std::uint64_t offset = 0;             ///< byte offset in that pickle of the first opcode naming it
  std::string opcode;                   ///< that opcode: "GLOBAL", "STACK_GLOBAL" or "INST"
  std::uint64_t times_named = 0;        ///< opcodes naming it
  std::uint64_t calls = 0;              ///< REDUCE, NEWOBJ(_EX), OBJ, INST, BUILD on it or on what it made
  std::uint64_t first_call_offset = 0;  ///< byte offset of the first call, when calls > 0
  std::string first_call;               ///< the first call's opcode, "" when never called
};

enum class pickle_verdict_kind : std::uint8_t {
  allowlisted,    ///< names allowlisted globals only
  inert_objects,  ///< names globals outside the allowlist, none that runs code
  runs_code,      ///< names a global on the code-execution list: always refused
};

/// "allowlisted", "inert objects" or "runs code".
[[nodiscard]] std::string_view pickle_verdict_name(pickle_verdict_kind kind) noexcept;

struct pickle_verdict {
  std::vector<pickle_global_use> globals;  ///< outside the allowlist, in the order first named
  [[nodiscard]] pickle_verdict_kind kind() const noexcept;
};

}  // namespace safetensors::torch
