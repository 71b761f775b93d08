// `simtspec listing FILE`: the predecoded program with structured control flow
// expanded into branch-unit primitives, next to the source line of each.
// `simtspec print FILE [--expand]`: the program printed back as source text.
#include <iostream>
#include <sstream>

#include "common.h"
#include "text/printer.h"

namespace simt::cli {
namespace {

std::vector<std::string> split_lines(const std::string& text) {
  std::vector<std::string> lines;
  std::string cur;
  for (char c : text) {
    if (c == '\n') {
      lines.push_back(cur);
      cur.clear();
    } else if (c != '\r') {
      cur += c;
    }
  }
  lines.push_back(cur);
  return lines;
}

std::string trim(std::string s) {
  size_t a = s.find_first_not_of(" \t");
  if (a == std::string::npos) return "";
  size_t b = s.find_last_not_of(" \t");
  return s.substr(a, b - a + 1);
}

}  // namespace

void register_listing(CLI::App& app, int& exit_code) {
  struct Args {
    std::string file;
    LaunchFlags launch;
  };
  auto args = std::make_shared<Args>();
  auto* cmd =
      app.add_subcommand("listing", "show the program after expansion of structured control flow");
  cmd->add_option("file", args->file, "program file")->required();
  args->launch.add(*cmd);
  cmd->callback([args, &exit_code] {
    auto opt = args->launch.options();
    if (!opt) return void(exit_code = kExitUsage);
    std::string text;
    auto loaded = load_file(args->file, *opt, &text);
    if (!loaded) return void(exit_code = kExitUsage);
    auto lines = split_lines(text);
    const auto& c = loaded->config;
    std::cout << "; listing of " << args->file << ": " << loaded->program->size()
              << " instructions, wave " << c.wave << ", simd " << c.simd_width() << ", " << c.warps
              << " warp(s) x " << c.workgroups << " workgroup(s)\n";
    std::cout << ";   pc  line  instruction                     source\n";
    uint32_t pc = 0;
    for (const auto& s : loaded->expanded.stmts) {
      if (s.kind == syntax::StmtKind::Label) {
        std::cout << s.label << ":\n";
        continue;
      }
      std::string ins = text::print_stmt(s);
      std::string src =
          s.span.line >= 1 && s.span.line <= lines.size() ? trim(lines[s.span.line - 1]) : "";
      size_t semi = src.find(';');
      if (semi != std::string::npos) src = trim(src.substr(0, semi));
      char head[32];
      std::snprintf(head, sizeof head, "  %5u %5u  ", pc, s.span.line);
      std::cout << head << ins;
      if (ins.size() < 32) std::cout << std::string(32 - ins.size(), ' ');
      std::cout << (src == ins ? "" : src) << "\n";
      ++pc;
    }
    exit_code = kExitOk;
  });
}

void register_print(CLI::App& app, int& exit_code) {
  struct Args {
    std::string file;
    bool expand = false;
    LaunchFlags launch;
  };
  auto args = std::make_shared<Args>();
  auto* cmd = app.add_subcommand("print", "print the program back as normalised source text");
  cmd->add_option("file", args->file, "program file")->required();
  cmd->add_flag("--expand", args->expand, "print with structured control flow expanded");
  args->launch.add(*cmd);
  cmd->callback([args, &exit_code] {
    auto opt = args->launch.options();
    if (!opt) return void(exit_code = kExitUsage);
    auto loaded = load_file(args->file, *opt);
    if (!loaded) return void(exit_code = kExitUsage);
    std::cout << text::print(args->expand ? loaded->expanded : loaded->ast);
    exit_code = kExitOk;
  });
}

}  // namespace simt::cli
