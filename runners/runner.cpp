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
  return {"wave:" + std::to_string(wave), "simd:" + std::to_string(simd),
          "warps:" + std::to_string(uint64_t{warps} * workgroups), "policy:" + policy};
}

json::Value RunConfig::to_json() const {
  json::Value v;
  v["wave"] = wave;
  v["simd"] = simd;
  v["warps"] = warps;
  v["workgroups"] = workgroups;
  v["cores"] = cores;
  v["policy"] = policy;
  v["seed"] = seed;
  v["max_steps"] = max_steps;
  return v;
}

bool RunConfig::from_json(const json::Value& v, RunConfig& out, std::string& err) {
  if (!v.is_object()) return err = "config must be an object", false;
  for (const auto& [k, x] : v.as_object()) {
    if (k == "policy") {
      if (!x.is_string()) return err = "config.policy must be a string", false;
      out.policy = x.as_string();
      continue;
    }
    if (!x.is_uint()) return err = "config." + k + " must be a non-negative integer", false;
    uint64_t n = x.as_uint();
    bool u32 = n <= 0xffffffffull;
    if (k == "wave" && u32)
      out.wave = static_cast<uint32_t>(n);
    else if (k == "simd" && u32)
      out.simd = static_cast<uint32_t>(n);
    else if (k == "warps" && u32)
      out.warps = static_cast<uint32_t>(n);
    else if (k == "workgroups" && u32)
      out.workgroups = static_cast<uint32_t>(n);
    else if (k == "cores" && u32)
      out.cores = static_cast<uint32_t>(n);
    else if (k == "seed")
      out.seed = n;
    else if (k == "max_steps")
      out.max_steps = n;
    else
      return err = "unknown or out-of-range config key '" + k + "'", false;
  }
  return true;
}

std::variant<std::unique_ptr<Runner>, std::string> open_runner(const std::string& name_or_file) {
  if (name_or_file == "reference") return make_reference_runner();
  if (name_or_file.size() > 5 && name_or_file.ends_with(".toml")) {
    auto spec = load_process_spec(name_or_file);
    if (auto* err = std::get_if<std::string>(&spec)) return *err;
    return make_process_runner(std::get<ProcessSpec>(std::move(spec)));
  }
  return "unknown runner '" + name_or_file + "' (use 'reference' or a runner description .toml)";
}

}  // namespace simt::runners
