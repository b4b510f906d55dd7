// SPDX-License-Identifier: Apache-2.0
// `safetensors validate [--policy P] [--json] FILE...`: header and layout checks only
// (8 + N bytes are read; the data is never touched).
#include <fmt/format.h>

#include "checkpoint_input.h"
#include "command.h"
#include "count_text.h"
#include "input.h"
#include "input_diagnosis.h"
#include "report.h"
#include "safetensors/file.h"
#include "safetensors/json_text.h"
#include "safetensors/sniff.h"

namespace st_cli {
namespace {

std::string json_or_null(const std::optional<std::string>& s) {
  return s ? safetensors::json_quote(*s) : std::string("null");
}

std::string json_line(const std::string& path, const safetensors::result<safetensors::header>& h) {
  std::string warnings = "[";
  if (h) {
    for (const auto& w : h->warnings()) {
      if (warnings.size() > 1) warnings += ",";
      warnings += safetensors::json_quote(w.message);
    }
  }
  warnings += "]";
  if (h) {
    return fmt::format(
        R"({{"file":{},"ok":true,"code":null,"message":null,"offset":null,"tensor":null,"warnings":{}}})",
        safetensors::json_quote(path), warnings);
  }
  const safetensors::error& e = h.err();
  return fmt::format(R"({{"file":{},"ok":false,"code":"{}","message":{},"offset":{},"tensor":{},"warnings":{}}})",
                     safetensors::json_quote(path), safetensors::error_code_name(e.code),
                     safetensors::json_quote(e.message), e.offset ? std::to_string(*e.offset) : "null",
                     json_or_null(e.tensor), warnings);
}

struct validate_args {
  std::vector<std::string> files;
  std::string policy = "reference";
  bool json = false;
};

run_result run_validate(const validate_args& args) {
  auto policy = safetensors::parse_policy(args.policy);
  if (!policy) {
    return usage_error(fmt::format("unknown policy '{}' (expected reference, strict or lenient)", args.policy));
  }
  safetensors::parse_options options;
  options.policy = *policy;
  int status = exit_ok;
  for (const std::string& path : args.files) {
    if (is_checkpoint_path(path)) {
      status = std::max(status, validate_checkpoint(path, *policy, args.json));
      continue;
    }
    auto h = read_input_header(path, options);
    if (!h) h = safetensors::explain_format_error(std::move(h).err());
    if (args.json) {
      fmt::print("{}\n", json_line(path, h));
    } else if (h) {
      fmt::print("{}: ok ({})\n", printable_text(path), count_of(h->tensors().size(), "tensor"));
      for (const auto& w : h->warnings()) print_warning(fmt::format("{}: {}", path, w.message));
    } else {
      fmt::print("{}\n", problem_line(h.err(), path));
    }
    if (!h) status = std::max(status, exit_code_for(h.err()));
  }
  return status;
}

const command_registrar validate_registrar{
    "validate", "Check files against the format rules (exit 0 valid, 1 invalid, 2 I/O error)",
    [](CLI::App& app) -> runner {
      auto args = std::make_shared<validate_args>();
      app.add_option("files", args->files, "SafeTensors files, checkpoint directories or indexes")->required();
      add_policy(app, args->policy, "reference (default), strict (upload checks) or lenient");
      add_json(app, args->json, "One JSON object per line per file");
      return [args] { return run_validate(*args); };
    }};

}  // namespace
}  // namespace st_cli
