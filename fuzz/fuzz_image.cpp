// libFuzzer target: the context image reader (spec/preempt.md, preempt.image.check)
// on arbitrary bytes. read_image must reject an input with an offset within it (at
// most its length) and a message, or accept it; an image it accepts is printed
// (`image show`), equals itself (`image diff`), and is accepted again when checked
// against the launch its own header describes (the restore's check,
// preempt.image.check with an ImageExpect). Each input is also checked against
// one fixed launch, which rejects nearly all of them, field by field. Seeds in
// fuzz/seeds_image: images written by the reference (`simtspec run --preempt-at N
// --image OUT`), and findings kept as seeds (finding_*.img). Any crash, sanitizer
// report or __builtin_trap() is a finding.
#include <cstddef>
#include <cstdint>
#include <span>
#include <string>
#include <variant>

#include "exec/image.h"

namespace {

using simt::exec::ImageContent;
using simt::exec::ImageError;
using simt::exec::ImageExpect;

void check(bool ok) {
  if (!ok) __builtin_trap();
}

// The outcome of one read: an error inside the input, or an image that shows and
// diffs.
void exercise(std::span<const uint8_t> bytes, const ImageExpect* e) {
  auto r = simt::exec::read_image(bytes, e);
  if (auto* err = std::get_if<ImageError>(&r)) {
    check(err->offset <= bytes.size());
    check(!err->message.empty());
    return;
  }
  const ImageContent& img = std::get<ImageContent>(r);
  check(!simt::exec::show_image(img).empty());
  check(!simt::exec::diff_images(img, img).has_value());
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const std::span<const uint8_t> bytes(data, size);
  exercise(bytes, nullptr);
  // The launch the image's own header describes accepts it.
  auto r = simt::exec::read_image(bytes);
  if (auto* img = std::get_if<ImageContent>(&r)) {
    ImageExpect e;
    e.cfg = img->layout.cfg;
    e.buffer_bytes = img->layout.buffer_bytes;
    e.insns = img->layout.insns;
    e.host_actions = img->fixed.host_next;
    e.vtables = img->fixed.vtable == 0xffffffffu ? 0 : img->fixed.vtable + 1;
    auto again = simt::exec::read_image(bytes, &e);
    check(std::holds_alternative<ImageContent>(again));
    check(!simt::exec::diff_images(*img, std::get<ImageContent>(again)).has_value());
    // Flow C (every core) accepts exactly the images of every core.
    e.all_cores = true;
    const uint64_t all = e.cfg.cores >= 64 ? ~uint64_t{0} : (uint64_t{1} << e.cfg.cores) - 1;
    check(std::holds_alternative<ImageContent>(simt::exec::read_image(bytes, &e)) ==
          (img->layout.core_set == all));
  }
  // A fixed launch: the defaults with a small state and one buffer.
  ImageExpect fixed;
  fixed.cfg.wave = 4;
  fixed.cfg.vregs = 1;
  fixed.cfg.sregs = 1;
  fixed.cfg.mask_depth = 1;
  fixed.cfg.call_depth = 1;
  fixed.cfg.stack = 0;
  fixed.buffer_bytes = {16};
  fixed.insns = 20;
  fixed.host_actions = 1;
  exercise(bytes, &fixed);
  return 0;
}
