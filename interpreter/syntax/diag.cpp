#include "syntax/diag.h"

#include <algorithm>

namespace simt::syntax {

void Diagnostics::add(DiagKind kind, Span span, std::string message, std::string clause,
                      std::string origin) {
  if (list_.size() >= kMaxReported) return;
  list_.push_back({kind, span, std::move(message), std::move(clause), std::move(origin)});
}

std::string format_diag(const std::string& file, const Diagnostic& d) {
  std::string out = d.origin.empty() ? file : d.origin;
  if (d.origin.empty() || d.span.line > 0)  // an origin without lines: a request's field
    out += ':' + std::to_string(d.span.line == 0 ? 1 : d.span.line) + ':' +
           std::to_string(d.span.col == 0 ? 1 : d.span.col);
  out += ": ";
  switch (d.kind) {
    case DiagKind::Syntax:
      out += "error: ";
      break;
    case DiagKind::Invalid:
      out += "invalid program: ";
      break;
    case DiagKind::Config:
      out += "bad launch configuration: ";
      break;
  }
  out += d.message;
  if (!d.clause.empty()) out += " (" + d.clause + ")";
  return out;
}

namespace {
// Source order: by line, then column (ties keep the order they were reported in).
bool before(const Diagnostic& a, const Diagnostic& b) {
  if (a.span.line != b.span.line) return a.span.line < b.span.line;
  return a.span.col < b.span.col;
}
}  // namespace

const Diagnostic& Diagnostics::first() const {
  return *std::min_element(list_.begin(), list_.end(), before);
}

std::string Diagnostics::format(const std::string& file) const {
  std::vector<const Diagnostic*> sorted;
  for (const auto& d : list_) sorted.push_back(&d);
  std::stable_sort(sorted.begin(), sorted.end(),
                   [](const Diagnostic* a, const Diagnostic* b) { return before(*a, *b); });
  std::string out;
  for (const auto* d : sorted) out += format_diag(file, *d) + "\n";
  return out;
}

}  // namespace simt::syntax
