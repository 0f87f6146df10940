#include "tenferro/ops/sym_dim.hpp"

#include <algorithm>
#include <functional>
#include <set>

#include "tenferro/core/error.hpp"

namespace tenferro {

struct SymDim::Node {
  Kind kind;
  std::string name;      // Var and Dynamic
  SymDim lhs, rhs;       // binary kinds; lhs is the upper bound of a Dynamic
  bool dynamic = false;  // this node or one below it is Dynamic
  std::size_t hash = 0;
};

namespace {
std::int64_t floordiv_value(std::int64_t a, std::int64_t b) {
  if (b == 0) fail(ErrorKind::InvalidArgument, "sym_dim", "floordiv by zero");
  std::int64_t q = a / b;
  if ((a % b != 0) && ((a < 0) != (b < 0))) --q;
  return q;
}
// Extents are int64: arithmetic that leaves that range is a typed error,
// never a wrapped (small, wrong) size.
[[noreturn]] void overflow(std::int64_t a, const char* sym, std::int64_t b) {
  fail(ErrorKind::InvalidArgument, "sym_dim", "extent arithmetic ", a, sym, b,
       " overflows 64 bits; check the sizes");
}

std::int64_t apply(SymDim::Kind k, std::int64_t a, std::int64_t b) {
  std::int64_t r = 0;
  switch (k) {
    case SymDim::Kind::Add:
      if (__builtin_add_overflow(a, b, &r)) overflow(a, " + ", b);
      return r;
    case SymDim::Kind::Sub:
      if (__builtin_sub_overflow(a, b, &r)) overflow(a, " - ", b);
      return r;
    case SymDim::Kind::Mul:
      if (__builtin_mul_overflow(a, b, &r)) overflow(a, " * ", b);
      return r;
    case SymDim::Kind::FloorDiv:
      return floordiv_value(a, b);
    case SymDim::Kind::Min:
      return std::min(a, b);
    case SymDim::Kind::Max:
      return std::max(a, b);
    default:
      break;
  }
  fail(ErrorKind::Internal, "sym_dim", "not a binary kind");
}
const char* symbol(SymDim::Kind k) {
  switch (k) {
    case SymDim::Kind::Add:
      return " + ";
    case SymDim::Kind::Sub:
      return " - ";
    case SymDim::Kind::Mul:
      return "*";
    case SymDim::Kind::FloorDiv:
      return " // ";
    case SymDim::Kind::Min:
      return "min";
    case SymDim::Kind::Max:
      return "max";
    default:
      return "?";
  }
}
}  // namespace

SymDim SymDim::var(std::string name) {
  if (name.empty())
    fail(ErrorKind::InvalidArgument, "sym_dim", "a named size needs a non-empty name");
  SymDim d;
  auto node = std::make_shared<Node>();
  node->kind = Kind::Var;
  node->hash = std::hash<std::string>{}(name) ^ 0x5bd1e995;
  node->name = std::move(name);
  d.node_ = std::move(node);
  return d;
}

SymDim SymDim::dynamic(std::string name, SymDim upper_bound) {
  if (name.empty())
    fail(ErrorKind::InvalidArgument, "sym_dim", "a dynamic size needs a non-empty name");
  if (auto c = upper_bound.try_constant(); c && *c < 0) {
    fail(ErrorKind::InvalidArgument, "sym_dim", "dynamic size '", name, "' has upper bound ", *c,
         "; bounds must be >= 0");
  }
  SymDim d;
  auto node = std::make_shared<Node>();
  node->kind = Kind::Dynamic;
  node->hash = (std::hash<std::string>{}(name) ^ 0x27d4eb2f) * 31 + upper_bound.hash();
  node->name = std::move(name);
  node->lhs = std::move(upper_bound);
  node->dynamic = true;
  d.node_ = std::move(node);
  return d;
}

bool SymDim::depends_on_dynamic() const {
  return node_ != nullptr && node_->dynamic;
}

const std::string& SymDim::name() const {
  if (!node_ || (node_->kind != Kind::Var && node_->kind != Kind::Dynamic)) {
    fail(ErrorKind::InvalidArgument, "sym_dim", "dimension ", to_string(),
         " is not a named or dynamic size and has no name");
  }
  return node_->name;
}

const SymDim& SymDim::upper_bound() const {
  if (!is_dynamic()) {
    fail(ErrorKind::InvalidArgument, "sym_dim", "dimension ", to_string(),
         " is not a dynamic size and has no upper bound");
  }
  return node_->lhs;
}

SymDim::Kind SymDim::kind() const {
  return node_ ? node_->kind : Kind::Const;
}

std::int64_t SymDim::constant() const {
  if (!is_constant()) {
    fail(ErrorKind::InvalidArgument, "sym_dim", "dimension ", to_string(),
         " is symbolic; bind its names first");
  }
  return value_;
}

SymDim SymDim::make(Kind kind, const SymDim& a, const SymDim& b) {
  if (a.is_constant() && b.is_constant()) return SymDim(apply(kind, a.value_, b.value_));
  // Light simplification keeps inferred shapes readable and comparable.
  switch (kind) {
    case Kind::Add:
      if (a.is_constant() && a.value_ == 0) return b;
      if (b.is_constant() && b.value_ == 0) return a;
      break;
    case Kind::Sub:
      if (b.is_constant() && b.value_ == 0) return a;
      if (a == b) return SymDim(0);
      break;
    case Kind::Mul:
      if (a.is_constant() && a.value_ == 1) return b;
      if (b.is_constant() && b.value_ == 1) return a;
      if ((a.is_constant() && a.value_ == 0) || (b.is_constant() && b.value_ == 0))
        return SymDim(0);
      break;
    case Kind::FloorDiv:
      if (b.is_constant() && b.value_ == 1) return a;
      if (b.is_constant() && b.value_ == 0)
        fail(ErrorKind::InvalidArgument, "sym_dim", "floordiv by zero");
      break;
    case Kind::Min:
    case Kind::Max:
      if (a == b) return a;
      break;
    default:
      break;
  }
  SymDim d;
  auto node = std::make_shared<Node>();
  node->kind = kind;
  node->lhs = a;
  node->rhs = b;
  node->hash = (static_cast<std::size_t>(kind) * 0x100000001b3ULL) ^ (a.hash() * 31 + b.hash());
  node->dynamic = a.depends_on_dynamic() || b.depends_on_dynamic();
  d.node_ = std::move(node);
  return d;
}

std::int64_t SymDim::evaluate(const DimBindings& bindings) const {
  if (!node_) return value_;
  if (node_->kind == Kind::Var) {
    auto it = bindings.find(node_->name);
    if (it == bindings.end()) {
      fail(ErrorKind::InvalidArgument, "bind", "size '", node_->name,
           "' is not bound; pass a value for it when binding dimensions");
    }
    return it->second;
  }
  if (node_->kind == Kind::Dynamic) {
    auto it = bindings.find(node_->name);
    if (it == bindings.end()) {
      fail(ErrorKind::InvalidArgument, "bind", "dynamic size '", node_->name,
           "' is not bound yet: the op that declares it fixes it when the program runs, and "
           "only ops after it can use it");
    }
    return it->second;
  }
  return apply(node_->kind, node_->lhs.evaluate(bindings), node_->rhs.evaluate(bindings));
}

std::vector<std::string> SymDim::free_names() const {
  std::set<std::string> names;
  std::function<void(const SymDim&)> walk = [&](const SymDim& d) {
    if (!d.node_) return;
    if (d.node_->kind == Kind::Var) {
      names.insert(d.node_->name);
    } else if (d.node_->kind == Kind::Dynamic) {
      names.insert(d.node_->name);
      walk(d.node_->lhs);
    } else {
      walk(d.node_->lhs);
      walk(d.node_->rhs);
    }
  };
  walk(*this);
  return {names.begin(), names.end()};
}

std::string SymDim::to_string() const {
  if (!node_) return std::to_string(value_);
  const Kind k = node_->kind;
  if (k == Kind::Var || k == Kind::Dynamic) return node_->name;
  std::string out;
  if (k == Kind::Min || k == Kind::Max) {
    out.append(symbol(k)).append("(").append(node_->lhs.to_string()).append(", ");
    out.append(node_->rhs.to_string()).append(")");
  } else {
    out.append("(").append(node_->lhs.to_string()).append(symbol(k));
    out.append(node_->rhs.to_string()).append(")");
  }
  return out;
}

std::size_t SymDim::hash() const {
  return node_ ? node_->hash : std::hash<std::int64_t>{}(value_);
}

bool operator==(const SymDim& a, const SymDim& b) {
  if (a.is_constant() || b.is_constant()) {
    return a.is_constant() && b.is_constant() && a.value_ == b.value_;
  }
  if (a.node_ == b.node_) return true;
  if (a.node_->kind != b.node_->kind || a.node_->hash != b.node_->hash) return false;
  if (a.node_->kind == SymDim::Kind::Var) return a.node_->name == b.node_->name;
  if (a.node_->kind == SymDim::Kind::Dynamic)
    return a.node_->name == b.node_->name && a.node_->lhs == b.node_->lhs;
  return a.node_->lhs == b.node_->lhs && a.node_->rhs == b.node_->rhs;
}

SymDim operator+(const SymDim& a, const SymDim& b) {
  return SymDim::make(SymDim::Kind::Add, a, b);
}
SymDim operator-(const SymDim& a, const SymDim& b) {
  return SymDim::make(SymDim::Kind::Sub, a, b);
}
SymDim operator*(const SymDim& a, const SymDim& b) {
  return SymDim::make(SymDim::Kind::Mul, a, b);
}
SymDim floordiv(const SymDim& a, const SymDim& b) {
  return SymDim::make(SymDim::Kind::FloorDiv, a, b);
}
SymDim min(const SymDim& a, const SymDim& b) {
  return SymDim::make(SymDim::Kind::Min, a, b);
}
SymDim max(const SymDim& a, const SymDim& b) {
  return SymDim::make(SymDim::Kind::Max, a, b);
}

SymShape to_sym_shape(std::span<const std::int64_t> shape) {
  return SymShape(shape.begin(), shape.end());
}

std::optional<Shape> try_concrete(const SymShape& shape) {
  Shape out;
  for (const auto& d : shape) {
    if (!d.is_constant()) return std::nullopt;
    out.push_back(d.constant());
  }
  return out;
}

Shape evaluate(const SymShape& shape, const DimBindings& bindings) {
  Shape out;
  for (const auto& d : shape) out.push_back(d.evaluate(bindings));
  return out;
}

std::string to_string(const SymShape& shape) {
  std::string s = "[";
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (i) s += ", ";
    s += shape[i].to_string();
  }
  return s + "]";
}

bool depends_on_dynamic(const SymShape& shape) {
  for (const auto& d : shape)
    if (d.depends_on_dynamic()) return true;
  return false;
}

SymDim numel(const SymShape& shape) {
  SymDim n(1);
  for (const auto& d : shape) n = n * d;
  return n;
}

}  // namespace tenferro
