#include "syntax/ast.h"

namespace simt::syntax {

bool SizeExpr::operator==(const SizeExpr& o) const {
  if (kind != o.kind) return false;
  switch (kind) {
    case Kind::Num:
      return num == o.num;
    case Kind::Sym:
      return sym == o.sym;
    case Kind::Neg:
      return lhs && o.lhs && *lhs == *o.lhs;
    default:
      if (!lhs || !rhs || !o.lhs || !o.rhs) return false;
      return *lhs == *o.lhs && *rhs == *o.rhs;
  }
}

uint32_t elem_size(ElemType t) {
  switch (t) {
    case ElemType::U8:
      return 1;
    case ElemType::U16:
      return 2;
    case ElemType::U32:
    case ElemType::I32:
      return 4;
  }
  return 4;
}

std::string_view elem_type_name(ElemType t) {
  switch (t) {
    case ElemType::U8:
      return "u8";
    case ElemType::U16:
      return "u16";
    case ElemType::U32:
      return "u32";
    case ElemType::I32:
      return "i32";
  }
  return "u32";
}

namespace {
struct HostKindInfo {
  std::string_view name, keys;
};
constexpr HostKindInfo kHostKinds[] = {
#define SIMT_HOST_ACTION(id, name, keys, clause) {name, keys},
#include "syntax/host_actions.def"
#undef SIMT_HOST_ACTION
};
}  // namespace

std::string_view host_kind_name(HostKind k) {
  return kHostKinds[static_cast<size_t>(k)].name;
}

std::string_view host_kind_keys(HostKind k) {
  return kHostKinds[static_cast<size_t>(k)].keys;
}

std::string host_kind_list() {
  std::string out;
  for (const auto& k : kHostKinds) out += (out.empty() ? "" : ", ") + std::string(k.name);
  return out;
}

std::string_view buffer_mode_name(BufferMode m) {
  switch (m) {
    case BufferMode::In:
      return "in";
    case BufferMode::Out:
      return "out";
    case BufferMode::InOut:
      return "inout";
  }
  return "inout";
}

}  // namespace simt::syntax
