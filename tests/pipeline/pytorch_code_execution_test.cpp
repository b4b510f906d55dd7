// SPDX-License-Identifier: Apache-2.0
// Pickles that try to run code (issue 34): a global on the code-execution list
// (pickle_code_globals.cpp) named anywhere in the stream refuses the whole file with
// CodeExecution, in every mode and wherever its result goes; other globals outside the
// allowlist stay inert, are recorded in the verdict, and are refused by strict only.
// The hostile corpus is tests/fixtures/pytorch/hostile (scripts/fixtures/make_pickle_attack_fixtures.py).
#include <gtest/gtest.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "formats/pytorch/pickle_code_globals.h"
#include "safetensors/formats/pickle.h"
#include "safetensors/formats/pytorch.h"
#include "safetensors/pipeline/convert.h"
#include "support/byte_views.h"
#include "support/paths.h"
#include "support/pytorch_fixtures.h"
#include "support/status_matchers.h"

namespace st = safetensors;
namespace fs = std::filesystem;
using namespace std::string_literals;

namespace {

using st_test::bytes_of;

std::string ce_u32(std::uint32_t v) {
  std::string s(4, '\0');
  for (int i = 0; i < 4; ++i) s[static_cast<std::size_t>(i)] = static_cast<char>((v >> (8 * i)) & 0xff);
  return s;
}
std::string ce_str(const std::string& s) {
  return std::string(1, 'X').append(ce_u32(static_cast<std::uint32_t>(s.size()))).append(s);
}
std::string ce_global(std::string_view module, std::string_view name) {
  return std::string(1, 'c').append(module).append(1, '\n').append(name).append(1, '\n');
}
std::string ce_stack_global(std::string_view module, std::string_view name) {
  return ce_str(std::string(module)) + ce_str(std::string(name)) + "\x93";
}

st::error ce_refusal(const std::string& pickle) {
  auto doc = st::torch::unpickle(bytes_of(pickle));
  EXPECT_FALSE(doc.ok()) << "accepted";
  if (doc.ok()) return {};
  return doc.err();
}

}  // namespace

namespace safetensors::torch::detail {
// How gtest shows an entry in the test list ("os.*", "builtins.eval"), found by ADL.
void PrintTo(const code_global& entry, std::ostream* out) {
  *out << entry.module << "." << (entry.name.empty() ? "*" : entry.name);
}
}  // namespace safetensors::torch::detail

namespace {

// Each entry of the table, named by GLOBAL and by STACK_GLOBAL, never called.
class CodeExecutionList : public testing::TestWithParam<st::torch::detail::code_global> {};

TEST_P(CodeExecutionList, NamingItAnywhereRefusesThePickle) {
  const auto& entry = GetParam();
  const std::string name = entry.name.empty() ? "anything" : std::string(entry.name);
  const std::string dotted = std::string(entry.module) + "." + name;
  EXPECT_TRUE(st::torch::detail::runs_code(entry.module, name)) << dotted;
  // The byte is the naming opcode's: GLOBAL right after PROTO, STACK_GLOBAL after its two strings.
  const std::size_t stack_global_at = 2 + ce_str(std::string(entry.module)).size() + ce_str(name).size();
  for (const auto& [pickle, at] :
       {std::pair{"\x80\x02" + ce_global(entry.module, name) + "0}.", std::size_t{2}},
        std::pair{"\x80\x04" + ce_stack_global(entry.module, name) + "0}.", stack_global_at}}) {
    auto e = ce_refusal(pickle);
    EXPECT_EQ(e.code, st::error_code::code_execution) << dotted << ": " << e.message;
    EXPECT_EQ(e.message,
              "refused: this file tries to run code: " + dotted + " at byte " + std::to_string(at) + " of the pickle");
    EXPECT_EQ(e.offset, at);
  }
  if (entry.name.empty()) {  // a whole module: its submodules too
    EXPECT_TRUE(st::torch::detail::runs_code(std::string(entry.module) + ".sub", "anything")) << dotted;
  }
}

INSTANTIATE_TEST_SUITE_P(Table, CodeExecutionList,
                         testing::ValuesIn(st::torch::detail::code_execution_globals().begin(),
                                           st::torch::detail::code_execution_globals().end()),
                         [](const testing::TestParamInfo<st::torch::detail::code_global>& entry) {
                           std::string id = std::string(entry.param.module) + "_" + std::string(entry.param.name);
                           for (char& c : id) {
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           }
                           return id + "_" + std::to_string(entry.index);
                         });

}  // namespace

// The issue's list, written out here rather than read from the table.
TEST(PickleCodeExecution, TheIssuesGlobalsAreListed) {
  const std::pair<const char*, const char*> listed[] = {
      {"os", "system"},
      {"posix", "system"},
      {"nt", "system"},
      {"os.path", "join"},
      {"subprocess", "Popen"},
      {"subprocess", "check_output"},
      {"sys", "modules"},
      {"builtins", "eval"},
      {"builtins", "exec"},
      {"builtins", "compile"},
      {"builtins", "open"},
      {"builtins", "__import__"},
      {"builtins", "getattr"},
      {"builtins", "setattr"},
      {"builtins", "delattr"},
      {"builtins", "globals"},
      {"builtins", "locals"},
      {"builtins", "vars"},
      {"builtins", "input"},
      {"builtins", "breakpoint"},
      {"__builtin__", "eval"},
      {"__builtin__", "execfile"},
      {"__builtins__", "exec"},
      {"runpy", "run_path"},
      {"importlib", "import_module"},
      {"importlib.util", "spec_from_file_location"},
      {"pty", "spawn"},
      {"socket", "socket"},
      {"shutil", "rmtree"},
      {"webbrowser", "open"},
      {"pickle", "loads"},
      {"_pickle", "loads"},
      {"cPickle", "loads"},
      {"marshal", "loads"},
      {"dill", "loads"},
      {"ctypes", "CDLL"},
      {"code", "InteractiveInterpreter"},
      {"codeop", "compile_command"},
      {"commands", "getoutput"},
      {"multiprocessing", "Process"},
      {"asyncio", "create_subprocess_shell"},
      {"functools", "partial"},
      {"operator", "attrgetter"},
      {"operator", "itemgetter"},
      {"operator", "methodcaller"},
      {"types", "FunctionType"},
      {"types", "CodeType"},
      {"torch.storage", "_load_from_bytes"},
      {"torch", "load"},
      {"numpy", "load"},
      {"numpy", "loadtxt"},
      {"numpy", "fromfile"},
      // Python 2 names, which the unpickler maps to Python 3 modules.
      {"commands", "Popen"},
      {"thread", "start_new_thread"},
      {"SocketServer", "TCPServer"},
      {"urllib2", "urlopen"},
      {"SimpleHTTPServer", "test"},
      // Protocol 4 resolves a dotted name attribute by attribute: torch.serialization imports os.
      {"torch", "serialization.os.system"},
      {"torch", "hub.load"},
      {"collections", "OrderedDict.__init__.__globals__"},
      {"builtins", "object.__subclasses__"}};
  for (const auto& [module, name] : listed) {
    EXPECT_TRUE(st::torch::detail::runs_code(module, name)) << module << "." << name;
  }
}

TEST(PickleCodeExecution, InertGlobalsAreNotListed) {
  const std::pair<const char*, const char*> inert[] = {
      {"argparse", "Namespace"},
      {"pathlib", "PosixPath"},
      {"numpy.core.multiarray", "scalar"},
      {"numpy", "dtype"},
      {"numpy.core.multiarray", "_reconstruct"},
      {"numpy", "ndarray"},
      {"numpy.random._pickle", "__randomstate_ctor"},
      {"__main__", "Net"},
      {"mylib.code", "Config"},  // a user module named like a listed one, deeper down
      {"collections", "OrderedDict"},
      {"torch.serialization", "_get_layout"},
      {"torch._utils", "_rebuild_qtensor"},
      {"torch.nn.modules.linear", "Linear"},
      {"copyreg", "_reconstructor"},
      {"builtins", "object"},
      {"torch", "osmosis"},
      {"ossify", "system"},
      {"Outer", "Inner.method"},
      {"copy_reg", "_reconstructor"},
      {"exceptions", "ValueError"},
      {"__builtin__", "set"}};
  for (const auto& [module, name] : inert) {
    EXPECT_FALSE(st::torch::detail::runs_code(module, name)) << module << "." << name;
  }
}

TEST(PickleCodeExecution, RefusedWhereverTheResultGoesAndOverLaterErrors) {
  const std::string call = ce_global("os", "system") + "(" + ce_str("touch x") + "tR";
  const std::vector<std::string> pickles = {
      "\x80\x02" + call + "0}.",                                    // POPped
      "\x80\x02}(" + ce_str("w") + call + ce_str("w") + "Nu.",      // its key overwritten
      "\x80\x02}(" + call + "Nu.",                                  // a dict key
      "\x80\x02" + call + "(" + ce_str("touch y") + "tR.",          // its result called again
      "\x80\x02" + call + "(" + ce_str("truncated"),                // then the stream ends
      "\x80\x02" + call + "0(" + ce_str("x") + "imylib\nThing\n.",  // then INST of something else
      "\x80\x02" + ce_global("argparse", "Namespace") + ")\x81}(" + ce_str("__setstate__") + ce_global("os", "system") +
          "ub" + ce_str("touch x") + "b.",  // NEWOBJ + BUILD __setstate__
  };
  for (const auto& p : pickles) {
    auto e = ce_refusal(p);
    EXPECT_EQ(e.code, st::error_code::code_execution) << e.message;
    EXPECT_NE(e.message.find("refused: this file tries to run code: os.system at byte "), std::string::npos)
        << e.message;
  }
  // INST names the global itself; two listed globals are counted.
  auto inst = ce_refusal("(" + ce_str("id") + "ios\nsystem\n.");
  EXPECT_EQ(inst.code, st::error_code::code_execution);
  EXPECT_EQ(inst.message, "refused: this file tries to run code: os.system at byte 8 of the pickle");
  auto two = ce_refusal("\x80\x02" + ce_global("builtins", "eval") + "0" + ce_global("subprocess", "Popen") + "0}.");
  EXPECT_EQ(two.message,
            "refused: this file tries to run code: builtins.eval at byte 2 of the pickle (and 1 more code-execution "
            "global)");
  // The same dotted text spelt as an innocent module first, then as an attribute walk: judged apart.
  auto walk = ce_refusal("\x80\x04" + ce_stack_global("mylib.os", "system") + "0" +
                         ce_stack_global("mylib", "os.system") + "0}.");
  EXPECT_EQ(walk.code, st::error_code::code_execution) << walk.message;
  // STACK_GLOBAL names are as long as GLOBAL's at most.
  auto long_name = ce_refusal("\x80\x04" + ce_stack_global("mylib", std::string(300, 'a')) + ".");
  EXPECT_EQ(long_name.code, st::error_code::invalid_format) << long_name.message;
}

TEST(PickleCodeExecution, TheVerdictRecordsForeignGlobalsAndTheirCalls) {
  // {'a': Namespace(), 'b': Namespace() (the class from the memo), 'c': Namespace() then BUILD}:
  // named twice, called four times (three REDUCEs and a BUILD).
  const std::string ns = ce_global("argparse", "Namespace");
  const std::string p =
      "\x80\x02}(" + ce_str("a") + ns + "q\x00)R"s + ce_str("b") + "h\x00)R"s + ce_str("c") + ns + ")R}b" + "u.";
  auto doc = st::torch::unpickle(bytes_of(p));
  ASSERT_OK(doc);
  const auto& v = doc->verdict();
  EXPECT_EQ(v.kind(), st::torch::pickle_verdict_kind::inert_objects);
  ASSERT_EQ(v.globals.size(), 1u);
  const auto& g = v.globals[0];
  EXPECT_EQ(g.name, "argparse.Namespace");
  EXPECT_FALSE(g.runs_code);
  EXPECT_EQ(g.pickle, "the pickle");
  EXPECT_EQ(g.offset, 10u);
  EXPECT_EQ(g.opcode, "GLOBAL");
  EXPECT_EQ(g.times_named, 2u);
  EXPECT_EQ(g.calls, 4u);  // REDUCE, REDUCE (memo), REDUCE, BUILD
  EXPECT_EQ(g.first_call, "REDUCE");
  EXPECT_EQ(g.first_call_offset, 10u + ns.size() + 3);
  auto plain = st::torch::unpickle(bytes_of("\x80\x02}(" + ce_str("x") + "Nu."));
  ASSERT_OK(plain);
  EXPECT_EQ(plain->verdict().kind(), st::torch::pickle_verdict_kind::allowlisted);
  EXPECT_EQ(st::torch::pickle_verdict_name(st::torch::pickle_verdict_kind::runs_code), "runs code");
}

TEST(PickleCodeExecution, EveryHostileFileIsRefusedInEveryModeAndNothingRuns) {
  fs::remove(st_test::hostile_payload_sentinel);
  const auto files = st_test::hostile_pickle_files();
  ASSERT_GE(files.size(), 50u);
  const auto dir = st_test::scratch_dir();
  for (const auto& [file, first] : files) {
    const std::string path = st_test::pytorch_fixture("hostile/" + file).string();
    const bool legacy = file.ends_with("_legacy.pt");
    const std::string where = legacy ? "pickle, which starts at file byte " : "data.pkl";
    for (const bool strict : {false, true}) {
      for (const char* key : {"", "model.state_dict"}) {
        st::torch::open_options options;
        options.strict = strict;
        options.key = key;
        auto c = st::torch::checkpoint::open(path, options);
        ASSERT_ERROR(c, st::error_code::code_execution) << file << " strict " << strict << " key " << key;
        EXPECT_NE(c.err().message.find("refused: this file tries to run code: " + first + " at byte "),
                  std::string::npos)
            << file << ": " << c.err().message;
        EXPECT_NE(c.err().message.find(where), std::string::npos) << file << ": " << c.err().message;
        EXPECT_EQ(c.err().path, path);
      }
    }
    const auto audit = st::torch::audit_checkpoint(path);
    ASSERT_TRUE(audit.refusal.has_value()) << file;
    EXPECT_EQ(audit.refusal->code, st::error_code::code_execution) << file;
    EXPECT_EQ(audit.verdict.kind(), st::torch::pickle_verdict_kind::runs_code) << file;
    bool found = false;
    for (const auto& g : audit.verdict.globals) found = found || (g.name == first && g.runs_code);
    EXPECT_TRUE(found) << file << " does not list " << first;
    const auto out = dir / (file + ".safetensors");
    auto converted = st::pipeline::convert(path, out.string());
    ASSERT_ERROR(converted, st::error_code::code_execution) << file;
    EXPECT_FALSE(fs::exists(out)) << file;
  }
  EXPECT_FALSE(fs::exists(st_test::hostile_payload_sentinel)) << "a payload ran";
}

// Namespace, PosixPath and numpy scalars are inert: skipped by default, refused by strict
// wherever they are, whatever the key.
TEST(PickleCodeExecution, InertObjectsConvertByDefaultAndStrictRefusesThemWhateverTheKey) {
  for (const char* file : {"opaque.pt", "opaque_legacy.pt"}) {
    const std::string path = st_test::pytorch_fixture(file).string();
    auto c = st::torch::checkpoint::open(path);
    ASSERT_OK(c);
    EXPECT_EQ(c->verdict().kind(), st::torch::pickle_verdict_kind::inert_objects) << file;
    std::vector<std::string> names;
    for (const auto& g : c->verdict().globals) names.push_back(g.name);
    for (const char* name : {"argparse.Namespace", "pathlib.PosixPath", "numpy.core.multiarray.scalar"}) {
      EXPECT_NE(std::find(names.begin(), names.end(), name), names.end()) << file << ": " << name;
    }
    for (const char* key : {"", "model"}) {
      st::torch::open_options strict;
      strict.strict = true;
      strict.key = key;
      auto refused = st::torch::checkpoint::open(path, strict);
      ASSERT_ERROR(refused, st::error_code::unsafe_content) << file << " key " << key;
      EXPECT_NE(refused.err().message.find("names a global outside the allowlist: argparse.Namespace at byte "),
                std::string::npos)
          << refused.err().message;
    }
    const auto audit = st::torch::audit_checkpoint(path);
    EXPECT_FALSE(audit.refusal.has_value()) << file;
  }
  auto clean = st::torch::checkpoint::open(st_test::pytorch_fixture("basic.pt").string());
  ASSERT_OK(clean);
  EXPECT_EQ(clean->verdict().kind(), st::torch::pickle_verdict_kind::allowlisted);
}

// Protocol 0's STRING and UNICODE are read, so that an INST after them is judged by its global.
TEST(PickleCodeExecution, ProtocolZeroTextBeforeInstIsRead) {
  auto inst = ce_refusal("(S'touch x'\nios\nsystem\n.");
  EXPECT_EQ(inst.code, st::error_code::code_execution) << inst.message;
  auto unicode = ce_refusal("(Vtouch\\u0020x\nios\nsystem\n.");
  EXPECT_EQ(unicode.code, st::error_code::code_execution) << unicode.message;
  auto doc = st::torch::unpickle(bytes_of("(S'a\\nb\\x41\\'c'\nS\"q\"\nVx\\u00e9\\\\u0041\xe9\nt."s));
  ASSERT_OK(doc);
  const auto& items = doc->root().items;
  ASSERT_EQ(items.size(), 3u);
  EXPECT_EQ(items[0]->text, "a\nbA'c");
  EXPECT_EQ(items[1]->text, "q");
  EXPECT_EQ(items[2]->kind, st::torch::pickle_kind::string);
  EXPECT_EQ(items[2]->text, "x\xc3\xa9\\\\u0041\xc3\xa9");  // an even run of backslashes escapes nothing
  for (const char* bad : {"S'unquoted\n.", "Sx\n.", "Vbad\\u12\n."}) {
    auto e = st::torch::unpickle(bytes_of(bad));
    ASSERT_FALSE(e.ok()) << bad;
    EXPECT_EQ(e.err().code, st::error_code::invalid_format) << bad;
  }
}

// The positions that passed strict before (POPped, overwritten, a dict key, the requires_grad
// and hooks slots, a BUILD state on a tensor) with an inert object: they convert by default,
// and strict refuses them because the stream names the global, wherever it went.
TEST(PickleCodeExecution, StrictRefusesAGlobalOutsideTheAllowlistWhereverItsResultGoes) {
  std::ifstream in(st_test::pytorch_fixture("hostile/inert.tsv"));
  std::string line;
  int files = 0;
  while (std::getline(in, line)) {
    const std::string file = line.substr(0, line.find('\t'));
    const std::string path = st_test::pytorch_fixture("hostile/" + file).string();
    ++files;
    auto c = st::torch::checkpoint::open(path);
    ASSERT_OK(c) << file;
    ASSERT_EQ(c->tensors().size(), 1u) << file;
    EXPECT_EQ(c->tensors()[0].name, "w") << file;
    EXPECT_EQ(c->verdict().kind(), st::torch::pickle_verdict_kind::inert_objects) << file;
    st::torch::open_options strict;
    strict.strict = true;
    auto refused = st::torch::checkpoint::open(path, strict);
    ASSERT_ERROR(refused, st::error_code::unsafe_content) << file;
    EXPECT_NE(refused.err().message.find("names a global outside the allowlist: argparse.Namespace at byte "),
              std::string::npos)
        << file << ": " << refused.err().message;
  }
  EXPECT_EQ(files, 6);
}
