// The host side of a launch: reading a program, resolving its launch
// configuration (defaults < directives < TOML file < command line), and running
// the pipeline text -> AST -> structure check -> expansion -> validation ->
// predecoded program (spec/execution.md, exec.pipeline).
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include "exec/config.h"
#include "exec/program.h"
#include "syntax/ast.h"
#include "syntax/diag.h"

namespace simt::host {

// One optional value per row of exec/settings.def: a TOML file's or the command
// line's (or a protocol request's) overrides of the directives.
struct Overrides {
#define SIMT_SETTING(name, T, ...) std::optional<exec::SettingValue<exec::SettingType::T>> name;
#include "exec/settings.def"
};

// Reads a TOML configuration (state.launch.sources): a `[launch]` table whose keys are
// the directive names without the dot. Unknown keys and wrong types are errors.
std::optional<std::string> parse_config_toml(std::string_view text, const std::string& name,
                                             Overrides& out);
std::optional<std::string> load_config_toml(const std::string& path, Overrides& out);

struct LoadOptions {
  Overrides toml;  // from --config
  Overrides cli;   // from command-line flags, or a protocol request's config
  // Where `cli` came from, for errors (state.launch.check): empty for the command
  // line ("(set on the command line)"); otherwise a prefix that, with a setting's
  // name, locates it, e.g. "config." for a protocol request: the error's origin is
  // then "config.wave" instead of the program's first line.
  std::string cli_origin;
  bool validate_flow = true;
  std::vector<syntax::HostStep> host;  // trap.host: the launch's host script
};

// trap.host.toml: an integer of a host action exactly as written, as its sign and
// magnitude, so that every value up to 2^64 - 1 is exact (a step goes up to
// max_steps - 1, and max_steps up to 2^64 - 1). Readers give no HostInt for a value
// they cannot hold: it is an error located where it was written.
struct HostInt {
  bool negative = false;  // never with magnitude 0
  uint64_t magnitude = 0;
};
// trap.host: the value of one key of a host action, as TOML or JSON gave it.
using HostValue = std::variant<HostInt, bool, std::string>;
struct HostField {
  std::string key;
  HostValue value;
};
// trap.host.*: one action from its keys (`step`, `action` and the action's own keys).
// Returns what is wrong, naming the key.
std::optional<std::string> host_step_from(const std::vector<HostField>& keys,
                                          syntax::HostStep& out);
// trap.host.toml: a document holding only `[[host]]` tables (`simtspec run --host`).
// Errors are `name:line: message`.
std::optional<std::string> parse_host_toml(std::string_view text, const std::string& name,
                                           std::vector<syntax::HostStep>& out);
std::optional<std::string> load_host_toml(const std::string& path,
                                          std::vector<syntax::HostStep>& out);
// The script as TOML `[[host]]` tables (for reports and reproduce commands).
std::string host_to_toml(const std::vector<syntax::HostStep>& host);

struct Loaded {
  syntax::Program ast;       // as written
  syntax::Program expanded;  // structured control flow replaced by primitives
  exec::LaunchConfig config;
  std::shared_ptr<const exec::Program> program;
};

struct LoadResult {
  std::optional<Loaded> loaded;
  syntax::Diagnostics diags;
};

LoadResult load(std::string_view text, const LoadOptions& opt = {});

// Reads a whole file; false with a message on failure.
// syntax.file.size: the largest input file (program, test, TOML) the tools read.
inline constexpr size_t kMaxInputBytes = size_t{64} << 20;
// Reads a whole file; a directory, an unreadable file or one larger than
// kMaxInputBytes is an error with a message naming the path.
bool read_file(const std::string& path, std::string& out, std::string& err);
// A context image file (preempt.tool.run, preempt.tool.image), read the same way,
// at most kMaxImageBytes.
inline constexpr size_t kMaxImageBytes = size_t{1} << 30;
bool read_binary(const std::string& path, std::vector<uint8_t>& out, std::string& err);

// The configuration a program's directives and overrides give, with errors.
exec::LaunchConfig resolve_config(const syntax::LaunchDirectives& d, const LoadOptions& opt,
                                  syntax::Diagnostics& diags);

}  // namespace simt::host
