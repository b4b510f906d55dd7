// SPDX-License-Identifier: Apache-2.0
#include "formats/pytorch/pickle_code_globals.h"

#include <array>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace safetensors::torch::detail {
namespace {

// Whole modules ("" name) where the module's purpose is processes, files, the network,
// imports or code; single names where the rest of the module is harmless data (builtins,
// functools, operator, types, io, numpy, torch). Gathered from what pickle scanners
// (picklescan, modelscan, ModelAudit) flag and from the standard library's documentation.
constexpr std::array table{
    // Processes and the operating system.
    code_global{"os", "", "system, popen, exec*, spawn*, fork, remove, ..."},
    code_global{"posix", "", "os on POSIX: system, execv, ..."},
    code_global{"nt", "", "os on Windows: system, startfile, ..."},
    code_global{"subprocess", "", "Popen, run, call, check_output, getoutput"},
    code_global{"_posixsubprocess", "", "fork_exec"},
    code_global{"_winapi", "", "CreateProcess"},
    code_global{"commands", "", "Python 2: getoutput"},
    code_global{"popen2", "", "Python 2: popen2"},
    code_global{"pty", "", "spawn"},
    code_global{"platform", "", "popen (Python < 3.8) and helpers that run commands"},
    code_global{"sys", "", "modules, settrace, exit, ..."},
    code_global{"signal", "", "pthread_kill, signal handlers"},
    code_global{"_thread", "", "start_new_thread"},
    code_global{"multiprocessing", "", "Process, Pool, shared_memory"},
    code_global{"_multiprocessing", "", "multiprocessing internals"},
    code_global{"asyncio", "", "create_subprocess_shell, subprocess_exec, ..."},
    code_global{"shutil", "", "rmtree, move, copy, which"},
    code_global{"socketserver", "", "servers"},
    code_global{"tempfile", "", "files in arbitrary directories"},
    code_global{"webbrowser", "", "open runs a browser (a command)"},
    code_global{"pydoc", "", "pipepager runs a shell command"},
    // Code, imports and debuggers.
    code_global{"builtins", "eval", "evaluates a string"},
    code_global{"builtins", "exec", "runs a string"},
    code_global{"builtins", "execfile", "Python 2: runs a file"},
    code_global{"builtins", "compile", "makes code objects"},
    code_global{"builtins", "open", "opens any file"},
    code_global{"builtins", "file", "Python 2: opens any file"},
    code_global{"builtins", "__import__", "imports any module"},
    code_global{"builtins", "reload", "Python 2: re-imports a module"},
    code_global{"builtins", "getattr", "reaches any attribute (os.system from os)"},
    code_global{"builtins", "setattr", "changes any attribute"},
    code_global{"builtins", "delattr", "removes any attribute"},
    code_global{"builtins", "globals", "the caller's globals"},
    code_global{"builtins", "locals", "the caller's locals"},
    code_global{"builtins", "vars", "any object's __dict__"},
    code_global{"builtins", "input", "reads the terminal (evaluates it in Python 2)"},
    code_global{"builtins", "raw_input", "Python 2: reads the terminal"},
    code_global{"builtins", "breakpoint", "starts a debugger"},
    code_global{"builtins", "help", "the pager runs a command"},
    code_global{"builtins", "exit", "ends the process"},
    code_global{"builtins", "quit", "ends the process"},
    code_global{"builtins", "apply", "Python 2: calls any callable"},
    code_global{"builtins", "__build_class__", "runs a class body"},
    code_global{"runpy", "", "run_module, run_path"},
    code_global{"importlib", "", "import_module, machinery, util"},
    code_global{"imp", "", "load_source, load_module"},
    code_global{"pkgutil", "", "resolve_name imports anything"},
    code_global{"zipimport", "", "imports code from a zip"},
    code_global{"code", "", "InteractiveInterpreter.runsource"},
    code_global{"codeop", "", "compile"},
    code_global{"bdb", "", "debugger: run"},
    code_global{"pdb", "", "debugger: run, set_trace"},
    code_global{"timeit", "", "timeit runs a string"},
    code_global{"cProfile", "", "run runs a string"},
    code_global{"profile", "", "run runs a string"},
    code_global{"trace", "", "Trace.run runs a string"},
    code_global{"doctest", "", "runs docstrings"},
    code_global{"ctypes", "", "calls any C function"},
    code_global{"_ctypes", "", "ctypes internals"},
    code_global{"types", "FunctionType", "makes a function from a code object"},
    code_global{"types", "LambdaType", "FunctionType"},
    code_global{"types", "CodeType", "makes a code object"},
    code_global{"types", "MethodType", "binds any callable"},
    code_global{"functools", "partial", "calls any callable with stored arguments"},
    code_global{"functools", "partialmethod", "partial"},
    code_global{"functools", "reduce", "calls any callable"},
    code_global{"operator", "attrgetter", "reaches any attribute"},
    code_global{"operator", "itemgetter", "reaches any item (of globals())"},
    code_global{"operator", "methodcaller", "calls any method"},
    code_global{"operator", "call", "calls any callable"},
    code_global{"_operator", "attrgetter", "operator.attrgetter"},
    code_global{"_operator", "itemgetter", "operator.itemgetter"},
    code_global{"_operator", "methodcaller", "operator.methodcaller"},
    code_global{"_operator", "call", "operator.call"},
    // Files.
    code_global{"io", "open", "opens any file"},
    code_global{"io", "open_code", "opens any file"},
    code_global{"io", "FileIO", "opens any file"},
    code_global{"_io", "open", "io.open"},
    code_global{"_io", "open_code", "io.open_code"},
    code_global{"_io", "FileIO", "io.FileIO"},
    code_global{"codecs", "open", "opens any file"},
    code_global{"fileinput", "", "opens any file"},
    code_global{"linecache", "", "reads any file"},
    // The network.
    code_global{"socket", "", "connections"},
    code_global{"ssl", "", "connections"},
    code_global{"http", "", "http.client, http.server"},
    code_global{"httplib", "", "Python 2: http.client"},
    code_global{"urllib", "", "urlopen"},
    code_global{"urllib2", "", "Python 2: urlopen"},
    code_global{"ftplib", "", "FTP"},
    code_global{"smtplib", "", "SMTP"},
    code_global{"telnetlib", "", "Telnet"},
    code_global{"xmlrpc", "", "remote calls"},
    code_global{"requests", "", "HTTP"},
    code_global{"aiohttp", "", "HTTP"},
    code_global{"httpx", "", "HTTP"},
    // Other deserialisers: a pickle inside the pickle, code objects.
    code_global{"pickle", "", "loads runs another pickle"},
    code_global{"_pickle", "", "pickle"},
    code_global{"cPickle", "", "Python 2: pickle"},
    code_global{"marshal", "", "loads makes code objects"},
    code_global{"shelve", "", "pickle on disk"},
    code_global{"dill", "", "pickles code"},
    code_global{"cloudpickle", "", "pickles code"},
    code_global{"joblib", "load", "a pickle on disk"},
    code_global{"pandas", "read_pickle", "a pickle on disk"},
    code_global{"pandas.io.pickle", "", "a pickle on disk"},
    // Installers.
    code_global{"pip", "", "installs packages (runs their code)"},
    code_global{"ensurepip", "", "installs pip"},
    code_global{"venv", "", "creates environments, runs pip"},
    code_global{"distutils", "", "spawn, build"},
    code_global{"setuptools", "", "builds and runs code"},
    // PyTorch: loaders of other files, code and compilers.
    code_global{"torch", "load", "loads another file with full pickle"},
    code_global{"torch.serialization", "load", "torch.load"},
    code_global{"torch.serialization", "_load", "torch.load's pickle"},
    code_global{"torch.serialization", "_legacy_load", "torch.load's legacy pickle"},
    code_global{"torch.storage", "_load_from_bytes", "torch.load of embedded bytes"},
    code_global{"torch.hub", "", "downloads and runs hubconf.py"},
    code_global{"torch.jit", "load", "loads TorchScript"},
    code_global{"torch.package", "", "imports packaged code"},
    code_global{"torch.fx.graph_module", "", "reduce_graph_module execs stored source"},
    code_global{"torch.utils.cpp_extension", "", "compiles and loads C++"},
    code_global{"torch._inductor", "", "compiles and loads code"},
    code_global{"torch._dynamo", "", "guards evaluate code"},
    // NumPy: loaders of other files (numpy.load unpickles), writers, compilers.
    code_global{"numpy", "load", "loads a file, with pickles"},
    code_global{"numpy", "loadtxt", "reads any file"},
    code_global{"numpy", "genfromtxt", "reads any file"},
    code_global{"numpy", "fromfile", "reads any file"},
    code_global{"numpy", "fromregex", "reads any file"},
    code_global{"numpy", "memmap", "maps any file, writable"},
    code_global{"numpy", "save", "writes any file"},
    code_global{"numpy", "savez", "writes any file"},
    code_global{"numpy", "savez_compressed", "writes any file"},
    code_global{"numpy", "savetxt", "writes any file"},
    code_global{"numpy", "DataSource", "opens files and URLs"},
    code_global{"numpy.lib.npyio", "", "numpy.load and friends"},
    code_global{"numpy.lib._npyio_impl", "", "numpy.load and friends (NumPy 2)"},
    code_global{"numpy.lib.format", "", "read_array unpickles"},
    code_global{"numpy.testing", "", "_private.utils.runstring execs a string"},
    code_global{"numpy.f2py", "", "compiles and imports Fortran"},
    code_global{"numpy.distutils", "", "spawn, build"},
    code_global{"numpy.ctypeslib", "", "load_library"},
};

// Python 2 module names a protocol 0-2 pickle may use, and the Python 3 modules the
// unpickler imports instead (Python's _compat_pickle.IMPORT_MAPPING, the entries that
// reach a listed module).
constexpr std::pair<std::string_view, std::string_view> python2_modules[] = {
    {"__builtin__", "builtins"},
    {"exceptions", "builtins"},
    {"cPickle", "pickle"},
    {"commands", "subprocess"},
    {"thread", "_thread"},
    {"SocketServer", "socketserver"},
    {"BaseHTTPServer", "http.server"},
    {"SimpleHTTPServer", "http.server"},
    {"CGIHTTPServer", "http.server"},
    {"httplib", "http.client"},
    {"Cookie", "http.cookies"},
    {"cookielib", "http.cookiejar"},
    {"urllib2", "urllib.request"},
    {"urlparse", "urllib.parse"},
    {"robotparser", "urllib.robotparser"},
    {"xmlrpclib", "xmlrpc.client"},
    {"SimpleXMLRPCServer", "xmlrpc.server"},
    {"DocXMLRPCServer", "xmlrpc.server"},
};

// The longest module in the table has this many dotted parts.
constexpr std::size_t max_module_parts = 4;

struct lookup {
  std::unordered_set<std::string> whole;     // "os"
  std::unordered_set<std::string> specific;  // "builtins.eval"
};

const lookup& tables() {
  static const lookup built = [] {
    lookup l;
    for (const auto& entry : table) {
      if (entry.name.empty()) {
        l.whole.emplace(entry.module);
      } else {
        l.specific.emplace(std::string(entry.module).append(1, '.').append(entry.name));
      }
    }
    return l;
  }();
  return built;
}

std::vector<std::string_view> split_dots(std::string_view text) {
  std::vector<std::string_view> parts;
  for (std::size_t start = 0;;) {
    const auto dot = text.find('.', start);
    parts.push_back(text.substr(start, dot == std::string_view::npos ? std::string_view::npos : dot - start));
    if (dot == std::string_view::npos) return parts;
    start = dot + 1;
  }
}

bool is_dunder(std::string_view part) { return part.size() > 4 && part.starts_with("__") && part.ends_with("__"); }

// Some listed path starts at parts[start]: a whole module, or a module and one name.
bool listed_from(const std::vector<std::string_view>& parts, std::size_t start) {
  const lookup& l = tables();
  std::string path;
  for (std::size_t i = start; i < parts.size() && i - start < max_module_parts; ++i) {
    std::string_view part = parts[i];
    if (i == start && (part == "__builtin__" || part == "__builtins__")) part = "builtins";  // Python 2 names
    if (i != start) path += '.';
    path += part;
    if (l.whole.contains(path)) return true;
    if (i + 1 < parts.size() && l.specific.contains(std::string(path).append(1, '.').append(parts[i + 1]))) {
      return true;
    }
  }
  return false;
}

bool listed_global(std::string_view module, std::string_view name) {
  std::vector<std::string_view> parts = split_dots(module);
  const std::size_t module_parts = parts.size();
  const auto name_parts = split_dots(name);
  parts.insert(parts.end(), name_parts.begin(), name_parts.end());
  if (listed_from(parts, 0)) return true;
  if (name_parts.size() < 2) return false;
  // A dotted name is an attribute walk (torch + "serialization.os.system" is os.system):
  // refused when it goes through a dunder or reaches a listed path anywhere along the way.
  for (std::size_t i = module_parts; i < parts.size(); ++i) {
    if (is_dunder(parts[i]) || listed_from(parts, i)) return true;
  }
  return false;
}

}  // namespace

std::span<const code_global> code_execution_globals() noexcept { return table; }

bool runs_code(std::string_view module, std::string_view name) {
  if (listed_global(module, name)) return true;
  const std::string_view first = module.substr(0, module.find('.'));
  for (const auto& [python2, python3] : python2_modules) {
    if (first == python2) return listed_global(std::string(python3).append(module.substr(first.size())), name);
  }
  return false;
}

}  // namespace safetensors::torch::detail
