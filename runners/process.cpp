#include "process.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <sstream>
#include <toml.hpp>

#include "host/host.h"
#include "host/toml_text.h"
#include "isa/isa.h"
#include "protocol.h"

extern char** environ;

namespace simt::runners {

namespace fs = std::filesystem;

namespace {

// Reading a runner description (runner.toml): every problem is reported as
// `FILE:LINE: message` naming the key, with the line of the value, or of the table
// a required key is missing from (no line for the file's top level).
class SpecReader {
 public:
  SpecReader(const std::string& file, const host::TomlDoc& doc) : file_(file), doc_(doc) {}

  std::string at(const toml::value& v) const {
    return file_ + ":" + std::to_string(doc_.line(v)) + ": ";
  }
  std::string top() const { return file_ + ": "; }

  // The value of `key` in `table` (named `where` in messages), or a message.
  const toml::value* find(const toml::value& table, const std::string& key) const {
    return table.contains(key) ? &table.at(key) : nullptr;
  }
  std::optional<std::string> str(const toml::value& v, const std::string& what,
                                 std::string& out) const {
    if (!v.is_string()) return at(v) + what + " must be a string";
    out = v.as_string().str;
    return std::nullopt;
  }
  std::optional<std::string> strings(const toml::value& v, const std::string& what,
                                     std::vector<std::string>& out) const {
    if (!v.is_array()) return at(v) + what + " must be an array of strings";
    for (const auto& x : v.as_array()) {
      if (!x.is_string()) return at(x) + what + " must be an array of strings";
      out.push_back(x.as_string().str);
    }
    return std::nullopt;
  }
  std::optional<std::string> integers(const toml::value& v, const std::string& what,
                                      std::set<uint32_t>& out) const {
    if (!v.is_array()) return at(v) + what + " must be an array of integers";
    for (const auto& x : v.as_array()) {
      if (!x.is_integer() || x.as_integer() < 1 || x.as_integer() > 4096)
        return at(x) + what + " must be an array of integers from 1 to 4096";
      out.insert(static_cast<uint32_t>(x.as_integer()));
    }
    return std::nullopt;
  }

 private:
  std::string file_;
  const host::TomlDoc& doc_;
};

// runner.toml `command`: a path with '/' is relative to the description's folder; a
// bare name is the file of that name next to the description if there is one, else
// a program looked up in PATH.
std::string resolve_command(const std::string& cmd, const std::string& file) {
  const fs::path dir = fs::path(file).parent_path();
  std::error_code ec;
  if (cmd.find('/') != std::string::npos) {
    if (fs::path(cmd).is_absolute()) return cmd;
    return fs::absolute(dir / cmd, ec).lexically_normal().string();
  }
  const fs::path beside = dir / cmd;
  if (!cmd.empty() && fs::is_regular_file(beside, ec))
    return fs::absolute(beside, ec).lexically_normal().string();
  return cmd;  // posix_spawnp searches PATH
}

}  // namespace

std::variant<ProcessSpec, std::string> parse_process_spec(const std::string& text,
                                                          const std::string& file) {
  ProcessSpec s;
  s.file = file;
  auto parsed = host::parse_toml(text);
  if (auto* e = std::get_if<host::TomlError>(&parsed))
    return file + ":" + (e->line ? std::to_string(e->line) + ":" : std::string()) +
           " not a usable TOML document: " + e->message;
  SpecReader r(file, std::get<host::TomlDoc>(parsed));
  const toml::value& doc = std::get<host::TomlDoc>(parsed).root;
  static const std::set<std::string> keys = {"name",       "version", "command", "args",
                                             "persistent", "timeout", "xfail",   "capabilities"};
  for (const auto& [k, v] : doc.as_table())
    if (!keys.count(k)) return r.at(v) + "unknown key '" + k + "'";
  for (const char* required : {"name", "command"})
    if (!doc.contains(required))
      return r.top() + "the description has no '" + required + "'" +
             (std::string(required) == "name" ? " (the implementation's name, a string)"
                                              : " (the executable to start, a string)");
  if (auto e = r.str(doc.at("name"), "'name'", s.name)) return *e;
  if (const auto* v = r.find(doc, "version"))
    if (auto e = r.str(*v, "'version'", s.version)) return *e;
  std::string cmd;
  if (auto e = r.str(doc.at("command"), "'command'", cmd)) return *e;
  if (cmd.empty()) return r.at(doc.at("command")) + "'command' is empty";
  s.command = resolve_command(cmd, file);
  if (const auto* v = r.find(doc, "args"))
    if (auto e = r.strings(*v, "'args'", s.args)) return *e;
  if (const auto* v = r.find(doc, "persistent")) {
    if (!v->is_boolean()) return r.at(*v) + "'persistent' must be true or false";
    s.persistent = v->as_boolean();
  }
  if (const auto* v = r.find(doc, "timeout")) {
    if (v->is_integer())
      s.timeout = static_cast<double>(v->as_integer());
    else if (v->is_floating())
      s.timeout = v->as_floating();
    else
      return r.at(*v) + "'timeout' must be a number of seconds";
    if (!(s.timeout > 0 && s.timeout <= 3600))
      return r.at(*v) + "'timeout' must be in (0, 3600] seconds";
  }
  if (const auto* v = r.find(doc, "xfail"))
    if (auto e = r.strings(*v, "'xfail'", s.xfail)) return *e;
  if (!doc.contains("capabilities"))
    return r.top() +
           "the description has no [capabilities] table (waves and features are "
           "required in it)";
  const auto& c = doc.at("capabilities");
  if (!c.is_table()) return r.at(c) + "'capabilities' must be a table";
  static const std::set<std::string> ckeys = {"waves",    "simds",        "max_warps", "policies",
                                              "features", "instructions", "extras"};
  for (const auto& [k, v] : c.as_table())
    if (!ckeys.count(k)) return r.at(v) + "unknown key 'capabilities." + k + "'";
  for (const char* required : {"waves", "features"})
    if (!c.contains(required))
      return r.at(c) + "[capabilities] has no '" + required + "'" +
             (std::string(required) == "waves" ? " (the wave sizes it runs, e.g. [32])"
                                               : " (the feature tags it supports, e.g. "
                                                 "[\"alu\", \"mem\", \"branch\"])");
  if (auto e = r.integers(c.at("waves"), "capabilities.waves", s.caps.waves)) return *e;
  if (const auto* v = r.find(c, "simds")) {
    if (auto e = r.integers(*v, "capabilities.simds", s.caps.simds)) return *e;
  } else {
    s.caps.simds = s.caps.waves;
  }
  if (const auto* v = r.find(c, "max_warps")) {
    if (!v->is_integer() || v->as_integer() < 1 || v->as_integer() > 4096)
      return r.at(*v) + "capabilities.max_warps must be an integer from 1 to 4096";
    s.caps.max_warps = static_cast<uint32_t>(v->as_integer());
  }
  std::vector<std::string> list;
  if (const auto* v = r.find(c, "policies")) {
    if (auto e = r.strings(*v, "capabilities.policies", list)) return *e;
    s.caps.policies.insert(list.begin(), list.end());
  } else {
    s.caps.policies = {"round_robin"};
  }
  list.clear();
  if (auto e = r.strings(c.at("features"), "capabilities.features", list)) return *e;
  s.caps.features.insert(list.begin(), list.end());
  if (const auto* v = r.find(c, "instructions")) {
    if (v->is_string()) {
      if (v->as_string().str != "all")
        return r.at(*v) + "capabilities.instructions must be \"all\" or an array of mnemonics";
    } else {
      list.clear();
      if (auto e = r.strings(*v, "capabilities.instructions", list)) return *e;
      for (size_t i = 0; i < list.size(); ++i)
        if (!isa::find(list[i]))
          return r.at(v->as_array()[i]) + "capabilities.instructions: unknown mnemonic '" +
                 list[i] + "'";
      s.caps.all_instructions = false;
      s.caps.instructions.insert(list.begin(), list.end());
    }
  }
  if (const auto* v = r.find(c, "extras")) {
    list.clear();
    if (auto e = r.strings(*v, "capabilities.extras", list)) return *e;
    static const std::set<std::string> known = {"validate",    "livelock",      "trace",
                                                "no_validate", "own_scheduler", "host"};
    for (size_t i = 0; i < list.size(); ++i)
      if (!known.count(list[i]))
        return r.at(v->as_array()[i]) + "capabilities.extras: unknown extra '" + list[i] +
               "' (known: validate, livelock, trace, no_validate, own_scheduler, host)";
    s.caps.extras.insert(list.begin(), list.end());
  }
  return s;
}

std::variant<ProcessSpec, std::string> load_process_spec(const std::string& file) {
  std::string text, err;
  if (!host::read_file(file, text, err)) return "cannot open runner description '" + file + "'";
  return parse_process_spec(text, file);
}

namespace {

using Clock = std::chrono::steady_clock;
constexpr size_t kMaxStderr = 64 * 1024;

// One child process with pipes to its stdin, stdout and stderr.
class Child {
 public:
  ~Child() { kill_now(); }

  // Starts the process; an error message on failure.
  std::optional<std::string> start(const ProcessSpec& spec) {
    int in[2], out[2], err[2];
    if (pipe2(in, O_CLOEXEC) || pipe2(out, O_CLOEXEC) || pipe2(err, O_CLOEXEC))
      return std::string("pipe: ") + std::strerror(errno);
    posix_spawn_file_actions_t fa;
    posix_spawn_file_actions_init(&fa);
    posix_spawn_file_actions_adddup2(&fa, in[0], 0);
    posix_spawn_file_actions_adddup2(&fa, out[1], 1);
    posix_spawn_file_actions_adddup2(&fa, err[1], 2);
    std::vector<std::string> argv_s{spec.command};
    for (const auto& a : spec.args) argv_s.push_back(a);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawnp(&pid_, spec.command.c_str(), &fa, nullptr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    ::close(in[0]);
    ::close(out[1]);
    ::close(err[1]);
    in_ = in[1];
    out_ = out[0];
    err_ = err[0];
    if (rc != 0) {
      pid_ = -1;
      close_fds();
      return "cannot start '" + spec.command + "': " + std::strerror(rc);
    }
    fcntl(out_, F_SETFL, O_NONBLOCK);
    fcntl(err_, F_SETFL, O_NONBLOCK);
    return std::nullopt;
  }

  bool alive() const { return pid_ > 0; }

  bool write_all(const std::string& s) {
    size_t off = 0;
    while (off < s.size()) {
      ssize_t n = ::write(in_, s.data() + off, s.size() - off);
      if (n < 0 && errno == EINTR) continue;
      if (n <= 0) return false;
      off += static_cast<size_t>(n);
    }
    return true;
  }

  enum class Read { Line, Eof, Timeout };
  // Reads one line from stdout (collecting stderr meanwhile) before the deadline.
  Read read_line(std::string& line, Clock::time_point deadline) {
    for (;;) {
      size_t nl = buf_.find('\n');
      if (nl != std::string::npos) {
        line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        return Read::Line;
      }
      if (out_ < 0) return Read::Eof;
      auto now = Clock::now();
      if (now >= deadline) return Read::Timeout;
      int ms = static_cast<int>(
                   std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count()) +
               1;
      pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
      int n = ::poll(fds, err_ >= 0 ? 2 : 1, ms);
      if (n < 0 && errno == EINTR) continue;
      if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) drain(err_, stderr_, true);
      if (fds[0].revents & (POLLIN | POLLHUP)) drain(out_, buf_, false);
    }
  }

  // Collects whatever stderr is available without waiting long.
  void collect_stderr(int ms) {
    if (err_ < 0) return;
    auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    while (err_ >= 0 && Clock::now() < deadline) {
      pollfd fd{err_, POLLIN, 0};
      if (::poll(&fd, 1, 10) <= 0) break;
      drain(err_, stderr_, true);
    }
  }

  std::string take_stderr() {
    std::string s = std::move(stderr_);
    stderr_.clear();
    return s;
  }

  // Waits for the process to end (up to ms), then kills it; describes how it ended.
  std::string finish(int ms) {
    if (pid_ <= 0) return "";
    if (in_ >= 0) ::close(in_), in_ = -1;
    int status = 0;
    auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (r < 0) {
        pid_ = -1;
        close_fds();
        return "";
      }
      if (Clock::now() >= deadline) {
        ::kill(pid_, SIGKILL);
        ::waitpid(pid_, &status, 0);
        pid_ = -1;
        close_fds();
        return "killed after the deadline";
      }
      collect_stderr(10);
    }
    pid_ = -1;
    collect_stderr(0);
    close_fds();
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
      return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
             strsignal(WTERMSIG(status)) + ")";
    return "ended";
  }

  void kill_now() {
    if (pid_ > 0) {
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
      pid_ = -1;
    }
    close_fds();
  }

 private:
  void drain(int& fd, std::string& into, bool limited) {
    char tmp[8192];
    for (;;) {
      ssize_t n = ::read(fd, tmp, sizeof tmp);
      if (n > 0) {
        if (!limited || into.size() < kMaxStderr) into.append(tmp, static_cast<size_t>(n));
        continue;
      }
      if (n < 0 && errno == EINTR) continue;
      if (n == 0) ::close(fd), fd = -1;  // end of stream
      return;
    }
  }
  void close_fds() {
    for (int* fd : {&in_, &out_, &err_})
      if (*fd >= 0) ::close(*fd), *fd = -1;
  }

  pid_t pid_ = -1;
  int in_ = -1, out_ = -1, err_ = -1;
  std::string buf_, stderr_;
};

class ProcessRunner final : public Runner {
 public:
  explicit ProcessRunner(ProcessSpec s) : spec_(std::move(s)) {
    // A child that dies while we write must not kill the harness with SIGPIPE.
    ::signal(SIGPIPE, SIG_IGN);
  }
  ~ProcessRunner() override { shutdown(); }

  std::string name() const override { return spec_.name; }
  std::string version() const override { return spec_.version; }
  std::string command() const override {
    std::string c = spec_.command;
    for (const auto& a : spec_.args) c += " " + a;
    return c;
  }
  const Capabilities& capabilities() const override { return spec_.caps; }
  std::vector<std::string> xfail() const override { return spec_.xfail; }

  RunResult run(const RunRequest& req) override {
    std::unique_ptr<Child> child = take_idle();
    if (child) {
      // A kept-alive process may have died since its last answer; then the run
      // is retried once on a fresh process rather than blamed on this test.
      bool ended_early = false;
      RunResult r = attempt(req, std::move(child), &ended_early);
      if (!ended_early) return r;
    }
    return attempt(req, nullptr);
  }

 private:
  // `ended_early`: set when the process exited or closed its output before answering.
  RunResult attempt(const RunRequest& req, std::unique_ptr<Child> child,
                    bool* ended_early = nullptr) {
    RunResult r;
    if (!child) {
      child = std::make_unique<Child>();
      if (auto err = child->start(spec_)) {
        r.message = *err;
        return r;
      }
    }
    int64_t id;
    {
      std::lock_guard<std::mutex> g(mu_);
      id = ++next_id_;
    }
    auto deadline =
        Clock::now() + std::chrono::milliseconds(static_cast<int64_t>(spec_.timeout * 1000));
    std::string line;
    Child::Read got = Child::Read::Eof;
    if (child->write_all(request_line(req, id))) got = child->read_line(line, deadline);
    if (got == Child::Read::Line) {
      r = parse_response_line(line, id);
      child->collect_stderr(0);
      r.stderr_text = child->take_stderr();
      if (r.kind == RunResult::Kind::Error) {
        child->kill_now();  // a violating process is not reused
      } else if (spec_.persistent) {
        give_back(std::move(child));
      } else {
        child->write_all(shutdown_line());
        child->finish(1000);
      }
      return r;
    }
    if (got == Child::Read::Timeout) {
      child->kill_now();
      char secs[32];
      std::snprintf(secs, sizeof secs, "%g", spec_.timeout);
      r.message = std::string("timeout: no answer within ") + secs + " s (process killed)";
      r.stderr_text = child->take_stderr();
      return r;
    }
    std::string how = child->finish(1000);
    r.message = "the process ended without answering" + (how.empty() ? "" : ": " + how);
    if (ended_early) *ended_early = true;
    r.stderr_text = child->take_stderr();
    return r;
  }

 public:
  void shutdown() override {
    std::vector<std::unique_ptr<Child>> idle;
    {
      std::lock_guard<std::mutex> g(mu_);
      idle.swap(idle_);
    }
    for (auto& c : idle) {
      c->write_all(shutdown_line());
      c->finish(2000);
    }
  }

 private:
  std::unique_ptr<Child> take_idle() {
    std::lock_guard<std::mutex> g(mu_);
    if (idle_.empty()) return nullptr;
    auto c = std::move(idle_.back());
    idle_.pop_back();
    return c;
  }
  void give_back(std::unique_ptr<Child> c) {
    std::lock_guard<std::mutex> g(mu_);
    idle_.push_back(std::move(c));
  }

  ProcessSpec spec_;
  std::mutex mu_;
  std::vector<std::unique_ptr<Child>> idle_;
  int64_t next_id_ = 0;
};

}  // namespace

std::unique_ptr<Runner> make_process_runner(ProcessSpec spec) {
  return std::make_unique<ProcessRunner>(std::move(spec));
}

}  // namespace simt::runners
