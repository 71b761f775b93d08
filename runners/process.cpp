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

std::string shell_quote(const std::string& s) {
  if (!s.empty() && s.find_first_not_of(
                        "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_./-=,:@") ==
                        std::string::npos)
    return s;
  std::string q = "'";
  for (char c : s) q += c == '\'' ? std::string("'\\''") : std::string(1, c);
  return q + "'";
}

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
  // runner.toml: wave sizes and SIMD widths are powers of two from 1 to 64
  // (state.launch.limits); anything else is a typo, not a capability.
  std::optional<std::string> widths(const toml::value& v, const std::string& what,
                                    std::set<uint32_t>& out) const {
    const std::string want = what + " must be an array of powers of two from 1 to 64";
    if (!v.is_array()) return at(v) + want;
    for (const auto& x : v.as_array()) {
      if (!x.is_integer()) return at(x) + want;
      const auto n = x.as_integer();
      if (n < 1 || n > 64 || (n & (n - 1)) != 0)
        return at(x) + want + " (" + std::to_string(n) + " is not one)";
      out.insert(static_cast<uint32_t>(n));
    }
    return std::nullopt;
  }
  // Each string of `v` (already read into `list`) must be a known name: an
  // unknown one is reported at its own line, with the names that are known.
  template <class Known>
  std::optional<std::string> names(const toml::value& v, const std::vector<std::string>& list,
                                   const std::string& what, const char* kind, Known known,
                                   const std::string& known_list) const {
    for (size_t i = 0; i < list.size(); ++i)
      if (!known(list[i]))
        return at(v.as_array()[i]) + what + ": unknown " + kind + " '" + list[i] + "'" +
               (known_list.empty() ? "" : " (known: " + known_list + ")");
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

// "a, b, c": the names of a table's rows, for messages.
template <class Rows, class Name>
std::string joined(const Rows& rows, Name name) {
  std::string out;
  for (const auto& row : rows) out += (out.empty() ? "" : ", ") + std::string(name(row));
  return out;
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
  static const std::set<std::string> keys = {"name",         "version",    "command",
                                             "args",         "persistent", "timeout",
                                             "max_response", "xfail",      "capabilities"};
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
  if (const auto* v = r.find(doc, "max_response")) {
    if (!v->is_integer() || v->as_integer() < static_cast<int64_t>(kMinMaxResponse) ||
        v->as_integer() > static_cast<int64_t>(kMaxMaxResponse))
      return r.at(*v) + "'max_response' must be an integer number of bytes from " +
             std::to_string(kMinMaxResponse) + " to " + std::to_string(kMaxMaxResponse);
    s.max_response = static_cast<size_t>(v->as_integer());
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
  if (auto e = r.widths(c.at("waves"), "capabilities.waves", s.caps.waves)) return *e;
  if (const auto* v = r.find(c, "simds")) {
    if (auto e = r.widths(*v, "capabilities.simds", s.caps.simds)) return *e;
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
    if (auto e = r.names(
            *v, list, "capabilities.policies", "policy",
            [](const std::string& p) { return exec::find_policy(p).has_value(); },
            joined(exec::kAllPolicies, exec::policy_name)))
      return *e;
    s.caps.policies.insert(list.begin(), list.end());
  } else {
    s.caps.policies = {"round_robin"};
  }
  list.clear();
  if (auto e = r.strings(c.at("features"), "capabilities.features", list)) return *e;
  if (auto e = r.names(
          c.at("features"), list, "capabilities.features", "feature tag",
          [](const std::string& f) { return isa::find_feature(f).has_value(); },
          joined(isa::kAllFeatures, isa::feature_name)))
    return *e;
  s.caps.features.insert(list.begin(), list.end());
  if (const auto* v = r.find(c, "instructions")) {
    if (v->is_string()) {
      if (v->as_string().str != "all")
        return r.at(*v) + "capabilities.instructions must be \"all\" or an array of mnemonics";
    } else {
      list.clear();
      if (auto e = r.strings(*v, "capabilities.instructions", list)) return *e;
      if (auto e = r.names(
              *v, list, "capabilities.instructions", "mnemonic",
              [](const std::string& m) { return isa::find(m).has_value(); }, ""))
        return *e;
      s.caps.all_instructions = false;
      s.caps.instructions.insert(list.begin(), list.end());
    }
  }
  if (const auto* v = r.find(c, "extras")) {
    list.clear();
    if (auto e = r.strings(*v, "capabilities.extras", list)) return *e;
    static constexpr std::string_view kExtras[] = {
        "validate", "livelock", "trace", "no_validate", "own_scheduler", "host", "preempt.image"};
    if (auto e = r.names(
            *v, list, "capabilities.extras", "extra",
            [](const std::string& x) { return std::ranges::find(kExtras, x) != std::end(kExtras); },
            joined(kExtras, [](std::string_view x) { return x; })))
      return *e;
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
    // runner.lifecycle: the process leads a process group of its own, so that a
    // timeout or shutdown ends everything it started (a wrapper's children too).
    posix_spawnattr_t attr;
    posix_spawnattr_init(&attr);
    posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP);
    posix_spawnattr_setpgroup(&attr, 0);
    std::vector<std::string> argv_s{spec.command};
    for (const auto& a : spec.args) argv_s.push_back(a);
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    int rc = posix_spawnp(&pid_, spec.command.c_str(), &fa, &attr, argv.data(), environ);
    posix_spawn_file_actions_destroy(&fa);
    posix_spawnattr_destroy(&attr);
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

  // Whether a kept-alive process has ended since its last answer (reaped now);
  // `how` says how it ended (runner.lifecycle).
  bool ended(std::string& how) {
    if (pid_ <= 0) return true;
    int status = 0;
    if (::waitpid(pid_, &status, WNOHANG) != pid_) return false;
    how = describe(status);
    end_group();
    collect_stderr(0);
    close_fds();
    return true;
  }

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

  enum class Read { Line, Eof, Timeout, TooLong, Interrupted };
  // Reads one line from stdout (collecting stderr meanwhile) before the deadline.
  // runner.protocol.response: a line longer than `max_line` bytes is not read to
  // its end (TooLong), so a process that floods its output costs bounded memory.
  Read read_line(std::string& line, Clock::time_point deadline, size_t max_line) {
    for (;;) {
      size_t nl = buf_.find('\n', scanned_);
      if (nl != std::string::npos) {
        line = buf_.substr(0, nl);
        buf_.erase(0, nl + 1);
        scanned_ = 0;
        return Read::Line;
      }
      scanned_ = buf_.size();  // each byte is searched for the newline once
      if (buf_.size() > max_line) return Read::TooLong;
      if (out_ < 0) return Read::Eof;
      if (interrupt_flag().load(std::memory_order_relaxed)) return Read::Interrupted;
      auto now = Clock::now();
      if (now >= deadline) return Read::Timeout;
      // Waits in slices of at most 100 ms, so that an interrupt is seen soon.
      int ms = static_cast<int>(std::min<int64_t>(
          100, std::chrono::duration_cast<std::chrono::milliseconds>(deadline - now).count() + 1));
      pollfd fds[2] = {{out_, POLLIN, 0}, {err_, POLLIN, 0}};
      int n = ::poll(fds, err_ >= 0 ? 2 : 1, ms);
      if (n < 0 && errno == EINTR) continue;
      if (err_ >= 0 && (fds[1].revents & (POLLIN | POLLHUP))) drain(err_, stderr_, kMaxStderr);
      if (fds[0].revents & (POLLIN | POLLHUP)) drain(out_, buf_, max_line + 1);
    }
  }

  // Collects whatever stderr is available without waiting long.
  void collect_stderr(int ms) {
    if (err_ < 0) return;
    auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    do {
      pollfd fd{err_, POLLIN, 0};
      if (::poll(&fd, 1, ms > 0 ? 10 : 0) <= 0) break;
      drain(err_, stderr_, kMaxStderr);
    } while (err_ >= 0 && Clock::now() < deadline);
  }

  std::string take_stderr() {
    std::string s = std::move(stderr_);
    stderr_.clear();
    return s;
  }

  // Waits for the process to end (up to ms), then kills its process group;
  // describes how it ended.
  std::string finish(int ms) {
    if (pid_ <= 0) return "";
    if (in_ >= 0) ::close(in_), in_ = -1;
    int status = 0;
    auto deadline = Clock::now() + std::chrono::milliseconds(ms);
    for (;;) {
      pid_t r = ::waitpid(pid_, &status, WNOHANG);
      if (r == pid_) break;
      if (r < 0) {
        end_group();
        close_fds();
        return "";
      }
      if (Clock::now() >= deadline) {
        kill_now();
        return "killed after the deadline";
      }
      collect_stderr(10);
    }
    end_group();
    collect_stderr(0);
    close_fds();
    return describe(status);
  }

  // Kills the process and everything in its process group (runner.lifecycle).
  void kill_now() {
    if (pid_ > 0) {
      ::kill(-pid_, SIGKILL);
      ::kill(pid_, SIGKILL);
      int st;
      ::waitpid(pid_, &st, 0);
      pid_ = -1;
    }
    close_fds();
  }

 private:
  static std::string describe(int status) {
    if (WIFEXITED(status)) return "exited with status " + std::to_string(WEXITSTATUS(status));
    if (WIFSIGNALED(status))
      return std::string("killed by signal ") + std::to_string(WTERMSIG(status)) + " (" +
             strsignal(WTERMSIG(status)) + ")";
    return "ended";
  }
  // The process has been reaped: what it started in its group ends with it.
  void end_group() {
    if (pid_ > 0) ::kill(-pid_, SIGKILL);
    pid_ = -1;
  }
  // Reads what is available from `fd` into `into`, keeping at most `cap` bytes
  // there (stderr beyond its cap is read and dropped; stdout is left unread once
  // full). One call reads at most kDrainChunk bytes, so that a process writing
  // without pause cannot keep the reader from its deadline.
  void drain(int& fd, std::string& into, size_t cap) {
    constexpr size_t kDrainChunk = size_t{1} << 20;
    char tmp[65536];
    for (size_t total = 0; total < kDrainChunk;) {
      size_t want = sizeof tmp;
      if (&into == &buf_) {
        if (into.size() >= cap) return;
        want = std::min(want, cap - into.size());
      }
      ssize_t n = ::read(fd, tmp, want);
      if (n > 0) {
        total += static_cast<size_t>(n);
        if (into.size() < cap)
          into.append(tmp, std::min(static_cast<size_t>(n), cap - into.size()));
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
  size_t scanned_ = 0;  // bytes of buf_ known to hold no newline
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

  // runner.lifecycle: a kept-alive process that has ended since its last answer,
  // or that takes no request (it ended before the request could be written), is
  // replaced by a fresh one without blame; what it left on its error stream is
  // kept, with how it ended, in this run's `stderr`. Once a request has been
  // written, an end without an answer is this run's `error`: never retried.
  RunResult run(const RunRequest& req) override {
    std::string earlier;
    std::unique_ptr<Child> child = take_idle();
    if (child) {
      std::string how;
      if (child->ended(how)) {
        earlier = previous_note(how, child->take_stderr());
        child.reset();
      }
    }
    if (child) {
      bool unwritten = false;
      RunResult r = attempt(req, std::move(child), &unwritten);
      if (!unwritten) return r;
      earlier = previous_note(r.message, r.stderr_text);
    }
    RunResult r = attempt(req, nullptr);
    if (!earlier.empty()) r.stderr_text = earlier + r.stderr_text;
    return r;
  }

 private:
  static std::string previous_note(const std::string& how, const std::string& err) {
    return "[simtspec: the runner's previous process ended after its last answer (" + how +
           "); a fresh process ran this request]\n" + (err.empty() ? "" : err + "\n");
  }

  // `unwritten`: set when a kept-alive process could not take the request (it had
  // ended); the request never reached it.
  RunResult attempt(const RunRequest& req, std::unique_ptr<Child> child,
                    bool* unwritten = nullptr) {
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
    if (!child->write_all(request_line(req, id))) {
      std::string how = child->finish(1000);
      r.stderr_text = child->take_stderr();
      r.message = "the process ended before it took the request" + (how.empty() ? "" : ": " + how);
      if (unwritten) *unwritten = true;
      return r;
    }
    std::string line;
    Child::Read got = child->read_line(line, deadline, spec_.max_response);
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
    if (got == Child::Read::Interrupted) {
      child->kill_now();
      r.message = std::string(kInterrupted) + " (process killed)";
      r.stderr_text = child->take_stderr();
      return r;
    }
    if (got == Child::Read::TooLong) {
      child->kill_now();
      r.message = "the response line is longer than " + std::to_string(spec_.max_response) +
                  " bytes (runner.toml max_response; process killed)";
      r.stderr_text = child->take_stderr();
      return r;
    }
    std::string how = child->finish(1000);
    r.message = "the process ended without answering" + (how.empty() ? "" : ": " + how);
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
