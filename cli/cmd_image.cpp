// `simtspec image show IMAGE` and `simtspec image diff A B` (spec/preempt.md,
// preempt.tool.image): a context image printed readably, and the first field in
// which two images differ, by name, warp and lane.
#include <iostream>

#include "common.h"
#include "exec/image.h"

namespace simt::cli {
namespace {

// Reads and checks an image; prints `FILE:OFFSET: message` and returns nothing
// when it is bad (preempt.image.check).
std::optional<exec::ImageContent> read_image_file(const std::string& path) {
  std::vector<uint8_t> bytes;
  std::string err;
  if (!host::read_binary(path, bytes, err)) {
    std::cerr << "simtspec: " << err << "\n";
    return std::nullopt;
  }
  auto img = exec::read_image(bytes);
  if (auto* e = std::get_if<exec::ImageError>(&img)) {
    std::cerr << path << ":" << e->offset << ": " << e->message << "\n";
    return std::nullopt;
  }
  return std::move(std::get<exec::ImageContent>(img));
}

}  // namespace

void register_image(CLI::App& app, int& exit_code) {
  auto* cmd = app.add_subcommand("image", "show or compare context images (spec/preempt.md)");
  cmd->require_subcommand(1);
  auto show_path = std::make_shared<std::string>();
  auto* show = cmd->add_subcommand("show", "print a context image readably");
  show->add_option("image", *show_path, "image file")->required();
  show->callback([show_path, &exit_code] {
    auto img = read_image_file(*show_path);
    if (!img) {
      exit_code = kExitUsage;
      return;
    }
    std::cout << exec::show_image(*img);
    exit_code = kExitOk;
  });
  auto paths = std::make_shared<std::pair<std::string, std::string>>();
  auto* diff = cmd->add_subcommand("diff", "name the first field in which two images differ");
  diff->add_option("a", paths->first, "first image")->required();
  diff->add_option("b", paths->second, "second image")->required();
  diff->callback([paths, &exit_code] {
    auto a = read_image_file(paths->first);
    auto b = a ? read_image_file(paths->second) : std::nullopt;
    if (!a || !b) {
      exit_code = kExitUsage;
      return;
    }
    if (auto d = exec::diff_images(*a, *b)) {
      std::cout << "first difference: " << *d << "\n";
      exit_code = kExitFail;
      return;
    }
    std::cout << "the images are equal\n";
    exit_code = kExitOk;
  });
}

}  // namespace simt::cli
