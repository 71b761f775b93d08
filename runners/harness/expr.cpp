#include "expr.h"

#include <bit>
#include <cctype>
#include <vector>

namespace simt::harness {

struct Expr::Node {
  enum class K { Num, Var, Unary, Binary, Cond, Call } k = K::Num;
  int64_t num = 0;
  std::string name;  // Var, Call; operator for Unary/Binary
  std::vector<std::shared_ptr<const Node>> kids;
};

namespace {

using NodeP = std::shared_ptr<const Expr::Node>;

class P {
 public:
  explicit P(std::string_view s) : s_(s) {}
  NodeP run(std::string& err) {
    NodeP n = cond(0);
    skip();
    if (!err_.empty()) {
      err = err_;
      return nullptr;
    }
    if (i_ != s_.size()) {
      err = "unexpected '" + std::string(s_.substr(i_, 10)) + "' at offset " + std::to_string(i_);
      return nullptr;
    }
    return n;
  }

 private:
  void skip() {
    while (i_ < s_.size() && std::isspace(static_cast<unsigned char>(s_[i_]))) ++i_;
  }
  bool eat(std::string_view op) {
    skip();
    if (s_.substr(i_, op.size()) != op) return false;
    // do not split "<<" into "<" or "&&" into "&"
    if (op.size() == 1 && i_ + 1 < s_.size()) {
      char n = s_[i_ + 1];
      if ((op == "<" && (n == '<' || n == '=')) || (op == ">" && (n == '>' || n == '=')) ||
          (op == "&" && n == '&') || (op == "|" && n == '|') || (op == "!" && n == '=') ||
          (op == "=" && n == '='))
        return false;
    }
    i_ += op.size();
    return true;
  }
  NodeP fail(std::string m) {
    if (err_.empty()) err_ = m + " at offset " + std::to_string(i_);
    auto n = std::make_shared<Expr::Node>();
    return n;
  }
  static NodeP bin(std::string op, NodeP a, NodeP b) {
    auto n = std::make_shared<Expr::Node>();
    n->k = Expr::Node::K::Binary;
    n->name = std::move(op);
    n->kids = {std::move(a), std::move(b)};
    return n;
  }
  NodeP cond(int depth) {
    if (depth > 100) return fail("expression nested too deeply");
    NodeP c = binary(0, depth);
    if (eat("?")) {
      NodeP a = cond(depth + 1);
      if (!eat(":")) return fail("expected ':'");
      NodeP b = cond(depth + 1);
      auto n = std::make_shared<Expr::Node>();
      n->k = Expr::Node::K::Cond;
      n->kids = {c, a, b};
      return n;
    }
    return c;
  }
  // Precedence levels, lowest first, as in C.
  NodeP binary(int level, int depth) {
    static const std::vector<std::vector<std::string>> levels = {{"||"},
                                                                 {"&&"},
                                                                 {"|"},
                                                                 {"^"},
                                                                 {"&"},
                                                                 {"==", "!="},
                                                                 {"<=", ">=", "<", ">"},
                                                                 {"<<", ">>"},
                                                                 {"+", "-"},
                                                                 {"*", "/", "%"}};
    if (level == static_cast<int>(levels.size())) return unary(depth);
    NodeP lhs = binary(level + 1, depth);
    for (;;) {
      bool matched = false;
      for (const auto& op : levels[static_cast<size_t>(level)]) {
        if (eat(op)) {
          lhs = bin(op, lhs, binary(level + 1, depth));
          matched = true;
          break;
        }
      }
      if (!matched || !err_.empty()) return lhs;
    }
  }
  NodeP unary(int depth) {
    if (depth > 100) return fail("expression nested too deeply");
    for (const char* op : {"-", "~", "!"}) {
      if (eat(op)) {
        auto n = std::make_shared<Expr::Node>();
        n->k = Expr::Node::K::Unary;
        n->name = op;
        n->kids = {unary(depth + 1)};
        return n;
      }
    }
    return primary(depth);
  }
  NodeP primary(int depth) {
    skip();
    if (i_ >= s_.size()) return fail("unexpected end of expression");
    char c = s_[i_];
    if (c == '(') {
      ++i_;
      NodeP n = cond(depth + 1);
      if (!eat(")")) return fail("expected ')'");
      return n;
    }
    if (std::isdigit(static_cast<unsigned char>(c))) {
      size_t start = i_;
      int base = 10;
      if (c == '0' && i_ + 1 < s_.size() && (s_[i_ + 1] == 'x' || s_[i_ + 1] == 'X')) {
        base = 16;
        i_ += 2;
      }
      uint64_t v = 0;
      size_t digits = 0;
      while (i_ < s_.size()) {
        char d = s_[i_];
        int x = std::isdigit(static_cast<unsigned char>(d)) ? d - '0'
                : (base == 16 && std::isxdigit(static_cast<unsigned char>(d)))
                    ? (std::tolower(static_cast<unsigned char>(d)) - 'a' + 10)
                    : -1;
        if (x < 0) break;
        if (v > (UINT64_MAX - static_cast<uint64_t>(x)) / static_cast<uint64_t>(base))
          return fail("number too large");
        v = v * static_cast<uint64_t>(base) + static_cast<uint64_t>(x);
        ++i_;
        ++digits;
      }
      if (digits == 0 || (i_ < s_.size() && std::isalnum(static_cast<unsigned char>(s_[i_])))) {
        i_ = start;
        return fail("malformed number");
      }
      auto n = std::make_shared<Expr::Node>();
      n->num = static_cast<int64_t>(v);
      return n;
    }
    if (std::isalpha(static_cast<unsigned char>(c)) || c == '_') {
      size_t start = i_;
      while (i_ < s_.size() && (std::isalnum(static_cast<unsigned char>(s_[i_])) || s_[i_] == '_'))
        ++i_;
      std::string name(s_.substr(start, i_ - start));
      auto n = std::make_shared<Expr::Node>();
      n->name = name;
      if (eat("(")) {
        n->k = Expr::Node::K::Call;
        if (name != "min" && name != "max" && name != "abs" && name != "popc")
          return fail("unknown function '" + name + "'");
        if (!eat(")")) {
          do n->kids.push_back(cond(depth + 1));
          while (eat(","));
          if (!eat(")")) return fail("expected ')'");
        }
        size_t want = (name == "min" || name == "max") ? 2 : 1;
        if (n->kids.size() != want)
          return fail(name + " takes " + std::to_string(want) + " argument(s)");
        return n;
      }
      // format.expr: the variables are those element_vars gives; any other name is
      // an error when the expression is read (format.lint), not when it is used.
      static const std::map<std::string, int64_t> known = element_vars(0, 1, 1, 1, 1, 1);
      if (!known.contains(name)) {
        std::string names;
        for (const auto& [k, v] : known) names += (names.empty() ? "" : ", ") + k;
        return fail("unknown variable '" + name.substr(0, 40) + "' (the variables are " + names +
                    ")");
      }
      n->k = Expr::Node::K::Var;
      return n;
    }
    return fail(std::string("unexpected '") + c + "'");
  }

  std::string_view s_;
  size_t i_ = 0;
  std::string err_;
};

using Vars = std::map<std::string, int64_t>;

bool eval_node(const Expr::Node& n, const Vars& vars, int64_t& out, std::string& err) {
  using K = Expr::Node::K;
  auto w = [](uint64_t x) { return static_cast<int64_t>(x); };
  switch (n.k) {
    case K::Num:
      out = n.num;
      return true;
    case K::Var: {
      auto it = vars.find(n.name);
      if (it == vars.end()) return err = "unknown variable '" + n.name + "'", false;
      out = it->second;
      return true;
    }
    case K::Unary: {
      int64_t a;
      if (!eval_node(*n.kids[0], vars, a, err)) return false;
      if (n.name == "-")
        out = w(0 - static_cast<uint64_t>(a));
      else if (n.name == "~")
        out = ~a;
      else
        out = !a;
      return true;
    }
    case K::Cond: {
      int64_t c;
      if (!eval_node(*n.kids[0], vars, c, err)) return false;
      return eval_node(*n.kids[c ? 1 : 2], vars, out, err);
    }
    case K::Call: {
      std::vector<int64_t> a(n.kids.size());
      for (size_t k = 0; k < n.kids.size(); ++k)
        if (!eval_node(*n.kids[k], vars, a[k], err)) return false;
      if (n.name == "min")
        out = std::min(a[0], a[1]);
      else if (n.name == "max")
        out = std::max(a[0], a[1]);
      else if (n.name == "abs")
        out = a[0] < 0 ? w(0 - static_cast<uint64_t>(a[0])) : a[0];
      else
        out = std::popcount(static_cast<uint64_t>(a[0]));
      return true;
    }
    case K::Binary:
      break;
  }
  int64_t a, b;
  if (!eval_node(*n.kids[0], vars, a, err)) return false;
  const std::string& op = n.name;
  if (op == "&&" && !a) return out = 0, true;
  if (op == "||" && a) return out = 1, true;
  if (!eval_node(*n.kids[1], vars, b, err)) return false;
  uint64_t ua = static_cast<uint64_t>(a), ub = static_cast<uint64_t>(b);
  if (op == "+")
    out = w(ua + ub);
  else if (op == "-")
    out = w(ua - ub);
  else if (op == "*")
    out = w(ua * ub);
  else if (op == "/" || op == "%") {
    if (b == 0) return err = "division by zero", false;
    if (a == INT64_MIN && b == -1)
      out = op == "/" ? a : 0;
    else
      out = op == "/" ? a / b : a % b;
  } else if (op == "<<")
    out = w(ua << (ub & 63));
  else if (op == ">>")
    out = a >> (ub & 63);
  else if (op == "&")
    out = a & b;
  else if (op == "|")
    out = a | b;
  else if (op == "^")
    out = a ^ b;
  else if (op == "==")
    out = a == b;
  else if (op == "!=")
    out = a != b;
  else if (op == "<")
    out = a < b;
  else if (op == "<=")
    out = a <= b;
  else if (op == ">")
    out = a > b;
  else if (op == ">=")
    out = a >= b;
  else if (op == "&&")
    out = b != 0;
  else if (op == "||")
    out = b != 0;
  else
    return err = "unknown operator " + op, false;
  return true;
}

}  // namespace

std::variant<Expr, std::string> Expr::parse(std::string_view text) {
  std::string err;
  P p(text);
  NodeP root = p.run(err);
  if (!root) return err;
  Expr e;
  e.root_ = root;
  e.text_ = std::string(text);
  return e;
}

std::variant<int64_t, std::string> Expr::eval(const Vars& vars) const {
  int64_t out = 0;
  std::string err;
  if (!root_) return std::string("empty expression");
  if (!eval_node(*root_, vars, out, err)) return err;
  return out;
}

void set_element(Vars& v, int64_t i) {
  const int64_t wave = v["wave"], warps = v["warps"];
  v["i"] = i;
  v["lane"] = wave ? i % wave : 0;
  int64_t gwarp = wave ? i / wave : 0;
  v["gwarp"] = gwarp;
  v["warp"] = warps ? gwarp % warps : 0;
  v["wg"] = warps ? gwarp / warps : 0;
}

Vars element_vars(int64_t i, int64_t wave, int64_t simd, int64_t warps, int64_t workgroups,
                  int64_t cores) {
  Vars v;
  v["wave"] = wave;
  v["simd"] = simd;
  v["warps"] = warps;
  v["workgroups"] = workgroups;
  v["cores"] = cores;
  v["threads"] = wave * warps * workgroups;
  set_element(v, i);
  return v;
}

}  // namespace simt::harness
