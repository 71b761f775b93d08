#include "runner.h"

#include "process.h"

namespace simt::runners {

std::optional<std::string> Capabilities::missing(const std::vector<std::string>& needed) const {
  for (const auto& n : needed) {
    auto colon = n.find(':');
    std::string kind = colon == std::string::npos ? "" : n.substr(0, colon);
    std::string val = colon == std::string::npos ? n : n.substr(colon + 1);
    auto num = [&]() -> int64_t {
      try {
        return std::stoll(val);
      } catch (...) {
        return -1;
      }
    };
    bool ok = true;
    if (kind == "wave")
      ok = waves.count(static_cast<uint32_t>(num()));
    else if (kind == "simd")
      ok = simds.count(static_cast<uint32_t>(num()));
    else if (kind == "warps")
      ok = num() >= 0 && num() <= max_warps;
    else if (kind == "policy")
      ok = policies.count(val);
    else if (kind == "feature")
      ok = features.count(val);
    else if (kind == "instr")
      ok = all_instructions || instructions.count(val);
    else
      ok = extras.count(n);
    if (!ok) return n;
  }
  return std::nullopt;
}

json::Value Capabilities::to_json() const {
  json::Value v;
  json::Array w, s, p, f, x;
  for (auto n : waves) w.emplace_back(n);
  for (auto n : simds) s.emplace_back(n);
  for (const auto& n : policies) p.emplace_back(n);
  for (const auto& n : features) f.emplace_back(n);
  for (const auto& n : extras) x.emplace_back(n);
  v["waves"] = w;
  v["simds"] = s;
  v["max_warps"] = max_warps;
  v["policies"] = p;
  v["features"] = f;
  if (all_instructions) {
    v["instructions"] = "all";
  } else {
    json::Array i;
    for (const auto& n : instructions) i.emplace_back(n);
    v["instructions"] = i;
  }
  v["extras"] = x;
  return v;
}

std::vector<std::string> RunConfig::needs() const {
  return {"wave:" + std::to_string(wave.value_or(0)), "simd:" + std::to_string(simd.value_or(0)),
          "warps:" + std::to_string(uint64_t{warps.value_or(0)} * workgroups.value_or(0)),
          "policy:" + policy.value_or("")};
}

json::Value RunConfig::to_json() const {
  json::Value v = json::Object{};
#define SIMT_SETTING(name, ...) \
  if (name) v[#name] = *name;
#include "exec/settings.def"
  return v;
}

namespace {

// runner.protocol.request: one `config` key's value, of its row's type; false
// with `err` naming the key when it is not.
template <exec::SettingType T>
bool config_setting(const json::Value& x, const std::string& k,
                    std::optional<exec::SettingWritten<T>>& out, std::string& err) {
  if constexpr (T == exec::SettingType::U32) {
    if (!x.is_uint() || x.as_uint() > 0xffffffffull)
      return err = "config." + k + " must be an integer from 0 to 2^32 - 1", false;
    out = static_cast<uint32_t>(x.as_uint());
  } else if constexpr (T == exec::SettingType::U64) {
    if (!x.is_uint()) return err = "config." + k + " must be an integer from 0 to 2^64 - 1", false;
    out = x.as_uint();
  } else if constexpr (T == exec::SettingType::Policy) {
    if (!x.is_string()) return err = "config." + k + " must be a string", false;
    out = x.as_string();
  } else {
    static_assert(T == exec::SettingType::Bool);
    if (!x.is_bool()) return err = "config." + k + " must be true or false", false;
    out = x.as_bool();
  }
  return true;
}

}  // namespace

bool RunConfig::from_json(const json::Value& v, RunConfig& out, std::string& err) {
  if (!v.is_object()) return err = "config must be an object", false;
  for (const auto& [k, x] : v.as_object()) {
    bool known = false, ok = true;
#define SIMT_SETTING(name, T, ...)                                  \
  if (k == #name) {                                                 \
    known = true;                                                   \
    ok = config_setting<exec::SettingType::T>(x, k, out.name, err); \
  }
#include "exec/settings.def"
    if (!known) return err = "unknown config key '" + k + "'", false;
    if (!ok) return false;
  }
  return true;
}

std::atomic<bool>& interrupt_flag() {
  static std::atomic<bool> flag{false};
  static_assert(std::atomic<bool>::is_always_lock_free);
  return flag;
}

std::variant<std::unique_ptr<Runner>, std::string> open_runner(const std::string& name_or_file,
                                                               std::optional<double> timeout) {
  if (name_or_file == "reference") return make_reference_runner(timeout.value_or(kDefaultTimeout));
  if (name_or_file.size() > 5 && name_or_file.ends_with(".toml")) {
    auto spec = load_process_spec(name_or_file);
    if (auto* err = std::get_if<std::string>(&spec)) return *err;
    if (timeout) std::get<ProcessSpec>(spec).timeout = *timeout;
    return make_process_runner(std::get<ProcessSpec>(std::move(spec)));
  }
  return "unknown runner '" + name_or_file + "' (use 'reference' or a runner description .toml)";
}

}  // namespace simt::runners
