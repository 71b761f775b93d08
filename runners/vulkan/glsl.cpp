#include "glsl.h"

#include <glslang/Public/ResourceLimits.h>
#include <glslang/Public/ShaderLang.h>
#include <glslang/SPIRV/GlslangToSpv.h>

#include <exception>
#include <mutex>
#include <string>

namespace simt::vulkan {

namespace {

// glslang's process state is built once; it is never finalised (it lives until exit).
bool glslang_initialised() {
  static const bool ok = glslang::InitializeProcess();
  return ok;
}

// The 1-based line of the first "ERROR: <name>:<line>:" of a glslang log.
std::optional<uint32_t> first_error_line(std::string_view log, std::string_view name) {
  for (size_t at = log.find("ERROR: "); at != std::string_view::npos;
       at = log.find("ERROR: ", at + 1)) {
    std::string_view rest = log.substr(at + 7);
    if (rest.substr(0, name.size()) != name || rest.size() <= name.size() ||
        rest[name.size()] != ':') {
      continue;
    }
    rest.remove_prefix(name.size() + 1);
    uint32_t line = 0;
    size_t digits = 0;
    while (digits < rest.size() && digits < 9 && rest[digits] >= '0' && rest[digits] <= '9') {
      line = line * 10 + static_cast<uint32_t>(rest[digits] - '0');
      ++digits;
    }
    if (digits > 0 && digits < rest.size() && rest[digits] == ':') return line;
  }
  return std::nullopt;
}

std::string trimmed(const char* s) {
  std::string t = s ? s : "";
  while (!t.empty() && (t.back() == '\n' || t.back() == ' ')) t.pop_back();
  return t;
}

}  // namespace

Result<std::vector<uint32_t>> glsl_compile(std::string_view source, std::string_view name) {
  try {
    static std::mutex mu;
    std::lock_guard<std::mutex> lock(mu);
    if (!glslang_initialised()) {
      return make_error(Error::Kind::Internal, "glslang::InitializeProcess failed");
    }
    const std::string file(name);
    const char* strings[] = {source.data()};
    const int lengths[] = {static_cast<int>(source.size())};
    const char* names[] = {file.c_str()};

    glslang::TShader shader(EShLangCompute);
    shader.setStringsWithLengthsAndNames(strings, lengths, names, 1);
    shader.setEntryPoint("main");
    shader.setEnvInput(glslang::EShSourceGlsl, EShLangCompute, glslang::EShClientVulkan, 100);
    shader.setEnvClient(glslang::EShClientVulkan, glslang::EShTargetVulkan_1_2);
    shader.setEnvTarget(glslang::EShTargetSpv, glslang::EShTargetSpv_1_5);
    const auto messages = static_cast<EShMessages>(EShMsgSpvRules | EShMsgVulkanRules);
    if (!shader.parse(GetDefaultResources(), 450, false, messages)) {
      std::string log = trimmed(shader.getInfoLog());
      Error e = make_error(Error::Kind::Compile, log.empty() ? "glslang rejected the shader" : log);
      e.line = first_error_line(log, file);
      return e;
    }
    glslang::TProgram program;
    program.addShader(&shader);
    if (!program.link(messages)) {
      std::string log = trimmed(program.getInfoLog());
      Error e =
          make_error(Error::Kind::Compile, log.empty() ? "glslang could not link the shader" : log);
      e.line = first_error_line(log, file);
      return e;
    }
    std::vector<uint32_t> words;
    spv::SpvBuildLogger logger;
    glslang::SpvOptions options;  // no optimiser: lavapipe optimises the NIR itself
    glslang::GlslangToSpv(*program.getIntermediate(EShLangCompute), words, &logger, &options);
    if (words.empty()) {
      return make_error(Error::Kind::Compile, "no SPIR-V generated: " + logger.getAllMessages());
    }
    return words;
  } catch (const std::exception& ex) {
    return make_error(Error::Kind::Internal, std::string("glsl_compile: ") + ex.what());
  }
}

}  // namespace simt::vulkan
