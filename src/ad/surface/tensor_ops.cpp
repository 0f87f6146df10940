// The operations of tenferro/ad/ops.hpp that need more than one line, written
// once over the tensor type, and the few tier hooks everything reduces to:
// running (direct, eager) or recording (traced) one op, making a filled
// tensor, and a tensor's shape as symbolic extents. The three tiers are
// instantiated at the end.

#include "tenferro/ad/ops.hpp"
#include "tenferro/core/report_as.hpp"

#include <cmath>
#include <numbers>

#include "ad/eager/impl.hpp"
#include "tenferro/ad/traced.hpp"

namespace tenferro {

namespace {

// ---- tier hooks ------------------------------------------------------------------------

// The direct tier: the operands' common backend (ContextMismatch for two).
template <class Each>
Backend& common_backend(std::size_t count, Each&& at, std::string_view op) {
  if (count == 0) {
    fail(ErrorKind::InvalidArgument, std::string(op),
         "a direct operation needs an operand to take the backend from");
  }
  Backend* b = &at(0).backend();
  for (std::size_t i = 1; i < count; ++i) {
    if (&at(i).backend() != b) {
      fail(ErrorKind::ContextMismatch, std::string(op),
           "operands are bound to different backends (on(backend, x)); bind them to one");
    }
  }
  return *b;
}
Backend& common_backend(std::span<const DirectTensor> in, std::string_view op) {
  return common_backend(
      in.size(), [&](std::size_t i) -> const DirectTensor& { return in[i]; }, op);
}

// Direct operands as the execute hooks take them: pointers, no handle copies.
template <class F>
DirectTensor run_direct(std::span<const DirectTensor* const> in, std::string_view op, F&& f) {
  Backend& backend = common_backend(
      in.size(), [&](std::size_t i) -> const DirectTensor& { return *in[i]; }, op);
  SmallVector<const Tensor*, 4> refs;
  for (const DirectTensor* t : in) refs.push_back(&t->value());
  return on(backend, f(prim::Operands{{}, std::span<const Tensor* const>(refs.data(), refs.size())},
                       backend));
}
template <class F>
DirectTensor run_direct(std::span<const DirectTensor> in, std::string_view op, F&& f) {
  SmallVector<const DirectTensor*, 4> ptrs;
  for (const DirectTensor& t : in) ptrs.push_back(&t);
  return run_direct(std::span<const DirectTensor* const>(ptrs.data(), ptrs.size()), op,
                    std::forward<F>(f));
}

// One elementwise kind on direct operands: its execute hook, without a copy
// of the operands or a lookup of the shared op.
template <class P>
DirectTensor run_elementwise(const P& params, std::span<const DirectTensor* const> in) {
  static const DimBindings kNone;
  return run_direct(in, name(params.op), [&](const prim::Operands& ops, Backend& backend) {
    return P::execute(params, ops, backend, kNone);
  });
}

DirectTensor run_one(const OpPtr& op, std::span<const DirectTensor> in) {
  const auto* prim = dynamic_cast<const PrimitiveOp*>(op.get());
  if (prim == nullptr) {
    // An extension op: through the runtime attached to the backend.
    Backend& backend = common_backend(in, op->name());
    std::vector<Tensor> values;
    for (const DirectTensor& t : in) values.push_back(t.value());
    auto outs = EagerRuntime::attached(backend)->runtime()->apply(op, values);
    if (outs.size() != 1) {
      fail(ErrorKind::InvalidArgument, std::string(op->name()), "returns ", outs.size(),
           " outputs; use apply() for several");
    }
    return on(backend, std::move(outs[0]));
  }
  return run_direct(in, prim->name(), [&](const prim::Operands& ops, Backend& backend) {
    return execute(prim->params(), ops, backend);
  });
}
std::vector<DirectTensor> run_all(const OpPtr& op, std::span<const DirectTensor> in) {
  Backend& backend = common_backend(in, op->name());
  std::vector<Tensor> values;
  for (const DirectTensor& t : in) values.push_back(t.value());
  std::vector<DirectTensor> out;
  for (Tensor& t : EagerRuntime::attached(backend)->runtime()->apply(op, values))
    out.push_back(on(backend, std::move(t)));
  return out;
}

EagerTensor run_one(const OpPtr& op, std::span<const EagerTensor> in) {
  return detail::eager_dispatch1(detail::common_runtime(in, op->name()), op, in);
}
TracedTensor run_one(const OpPtr& op, std::span<const TracedTensor> in) {
  return detail::make_traced1(op, in);
}
std::vector<EagerTensor> run_all(const OpPtr& op, std::span<const EagerTensor> in) {
  return detail::eager_dispatch(detail::common_runtime(in, op->name()), op, in);
}
std::vector<TracedTensor> run_all(const OpPtr& op, std::span<const TracedTensor> in) {
  return detail::make_traced(op, in);
}

SymShape sym_shape(const EagerTensor& x) {
  return to_sym_shape(x.shape());
}
SymShape sym_shape(const DirectTensor& x) {
  return to_sym_shape(x.shape());
}
// Extent `axis` of x when it is a constant.
std::optional<std::int64_t> extent_of(const EagerTensor& x, std::int64_t axis) {
  return x.shape()[static_cast<std::size_t>(axis)];
}
std::optional<std::int64_t> extent_of(const DirectTensor& x, std::int64_t axis) {
  return x.shape()[static_cast<std::size_t>(axis)];
}
std::optional<std::int64_t> extent_of(const TracedTensor& x, std::int64_t axis) {
  return x.shape()[static_cast<std::size_t>(axis)].try_constant();
}

const SymShape& sym_shape(const TracedTensor& x) {
  return x.shape();
}

EagerTensor filled(const EagerTensor& like, Scalar value, DType dtype, bool rank0) {
  // In the runtime's backend memory (any backend with a fill kernel).
  Backend& backend = like.runtime()->backend();
  return like.runtime()->tensor(full(rank0 ? Shape{} : like.shape(), value, dtype, backend));
}
// A fill on the backend itself (its own memory, any backend with a fill kernel).
DirectTensor filled(const DirectTensor& like, Scalar value, DType dtype, bool rank0) {
  return on(like.backend(), full(rank0 ? Shape{} : like.shape(), value, dtype, like.backend()));
}
TracedTensor filled(const TracedTensor& like, Scalar value, DType dtype, bool rank0) {
  return traced_full(rank0 ? SymShape{} : like.shape(), value, dtype);
}

// Eager and direct tensors have constant extents only.
template <class T>
requires(!std::is_same_v<T, TracedTensor>) void require_constant(const T&, const SymShape& shape,
                                                                 const char* op) {
  for (std::size_t i = 0; i < shape.size(); ++i) {
    if (!shape[i].is_constant()) {
      fail(ErrorKind::InvalidArgument, op, "extent ", i, " is the symbolic size ",
           shape[i].to_string(), "; eager tensors need constant extents (use the traced tier)");
    }
  }
}
void require_constant(const TracedTensor&, const SymShape&, const char*) {}

// Resolves one -1 extent against x's size; checks for other negative constants.
template <SurfaceTensor T>
SymShape resolve_reshape(const T& x, SymShape shape) {
  std::optional<std::size_t> infer;
  std::int64_t known = 1;
  bool known_constant = true;
  for (std::size_t i = 0; i < shape.size(); ++i) {
    const auto c = shape[i].try_constant();
    if (!c) {
      known_constant = false;
    } else if (*c == -1) {
      if (infer) fail(ErrorKind::InvalidArgument, "reshape", "only one extent may be -1");
      infer = i;
    } else if (*c < 0) {
      fail(ErrorKind::InvalidArgument, "reshape", "negative extent ", *c, " at position ", i);
    }
  }
  // The constant extents must be a shape a tensor can have (InvalidArgument,
  // as in the direct tier), so their product is exact.
  Shape given;
  for (const SymDim& d : shape)
    if (const auto c = d.try_constant(); c && *c >= 0) given.push_back(*c);
  known = shape_numel(given, "reshape");
  if (!infer) return shape;
  const auto total = numel(sym_shape(x)).try_constant();
  if (!total || !known_constant) {
    fail(ErrorKind::InvalidArgument, "reshape", "cannot infer -1 in ", to_string(shape),
         " with symbolic extents; give every extent");
  }
  if (known == 0 || *total % known != 0) {
    fail(ErrorKind::ShapeMismatch, "reshape", "cannot infer -1 in ", to_string(shape), " for ",
         *total, " elements");
  }
  shape[*infer] = *total / known;
  return shape;
}

// x seen with `shape` (its elements in column-major order): in the direct
// tier a view of a compact x, whose intermediates a composite owns; a reshape
// otherwise.
template <SurfaceTensor T>
T reshaped(const T& x, SymShape shape) {
  if constexpr (std::is_same_v<T, DirectTensor>) {
    if (x.value().is_contiguous()) {
      if (const std::optional<Shape> c = try_concrete(shape))
        return on(x.backend(), x.value().reshape(c->span()));
    }
  }
  return reshape(x, std::move(shape));
}

// x broadcast into `target`, x's axis i at dims[i]: in the direct tier a
// stride-0 view (GEMM reads broadcast batch axes in place); a
// broadcast_in_dim otherwise.
template <SurfaceTensor T>
T broadcast_view(const T& x, SymShape target, Axes dims) {
  if constexpr (std::is_same_v<T, DirectTensor>) {
    if (const std::optional<Shape> c = try_concrete(target)) {
      const Tensor& v = x.value();
      Strides strides(c->size(), 0);
      for (std::size_t i = 0; i < dims.size(); ++i) {
        const auto d = static_cast<std::size_t>(dims[i]);
        if (v.shape()[i] == (*c)[d]) strides[d] = v.strides()[i];
      }
      return on(x.backend(),
                Tensor::from_storage(v.storage(), v.dtype(), *c, std::move(strides), v.offset()));
    }
  }
  return broadcast_in_dim(x, std::move(target), std::move(dims));
}

// NumPy broadcast of two batch shapes (right-aligned); symbolic extents must
// be equal or meet a constant 1.
SymShape broadcast_batch(const SymShape& a, const SymShape& b) {
  const std::size_t n = std::max(a.size(), b.size());
  SymShape out(n);
  for (std::size_t i = 0; i < n; ++i) {
    const SymDim da = i < n - a.size() ? SymDim(1) : a[i - (n - a.size())];
    const SymDim db = i < n - b.size() ? SymDim(1) : b[i - (n - b.size())];
    if (da == db || db.try_constant() == 1) {
      out[i] = da;
    } else if (da.try_constant() == 1) {
      out[i] = db;
    } else {
      fail(ErrorKind::ShapeMismatch, "matmul", "batch extents ", da.to_string(), " and ",
           db.to_string(), " do not broadcast (batch shapes ", to_string(a), " and ", to_string(b),
           ")", da.is_constant() && db.is_constant() ? "" : "; broadcast_in_dim an operand first");
    }
  }
  return out;
}

}  // namespace

// ---- hooks declared in ops.hpp -----------------------------------------------------------

namespace detail {

template <SurfaceTensor T>
T apply_primitive(prim::Params params, std::initializer_list<T> inputs) {
  const std::span<const T> in(inputs.begin(), inputs.size());
  if constexpr (std::is_same_v<T, DirectTensor>) {
    // No op is built: the kind's execute hook runs on the parameters.
    if (in.empty()) {
      // A source (no operands) has no backend to run on in the direct tier.
      fail(ErrorKind::InvalidArgument, std::string(name(params)),
           "a direct source needs a backend; use full_like or a factory");
    }
    return run_direct(in, name(params), [&](const prim::Operands& ops, Backend& backend) {
      return execute(params, ops, backend);
    });
  } else {
    return run_one(make_primitive(std::move(params)), in);
  }
}

const DimBindings& no_bindings() {
  static const DimBindings kNone;
  return kNone;
}

Tensor direct_unary(UnaryOp op, const Tensor& x, Backend& backend) {
  static const DimBindings kNone;
  const Tensor* in[1] = {&x};
  return prim::Unary::execute(prim::Unary{op}, prim::Operands{{}, in}, backend, kNone);
}
Tensor direct_binary(BinaryOp op, const Tensor& a, const Tensor& b, Backend& backend) {
  static const DimBindings kNone;
  const Tensor* in[2] = {&a, &b};
  return prim::Binary::execute(prim::Binary{op}, prim::Operands{{}, in}, backend, kNone);
}

Tensor direct_reduce(ReduceOp op, const Tensor& x, std::span<const std::int64_t> axes,
                     Backend& backend, bool keepdim) {
  return run_kind(prim::Reduce{op, Axes(axes), keepdim}, {&x}, backend);
}
Tensor direct_reduce_all(ReduceOp op, const Tensor& x, Backend& backend) {
  return run_kind(prim::Reduce{op, every_axis(x), false}, {&x}, backend);
}

std::vector<DirectTensor> on_each(Backend& backend, ListRef<Tensor> xs) {
  std::vector<DirectTensor> out;
  out.reserve(xs.size());
  for (std::size_t i = 0; i < xs.size(); ++i) out.push_back(borrow(backend, xs[i]));
  return out;
}

template <SurfaceTensor T>
std::vector<T> apply_span(const OpPtr& op, std::span<const T> inputs) {
  if (!op) fail(ErrorKind::InvalidArgument, "apply", "op is null");
  return run_all(op, inputs);
}

template <SurfaceTensor T>
T concatenate_span(std::span<const T> xs, std::int64_t axis) {
  if (xs.empty()) fail(ErrorKind::InvalidArgument, "concatenate", "needs at least one tensor");
  return run_one(make_primitive(prim::Concatenate{axis, xs.size()}), xs);
}

template <SurfaceTensor T>
T stack_span(std::span<const T> xs, std::int64_t axis) {
  return report_as("stack", [&]() -> T {
    if (xs.empty()) fail(ErrorKind::InvalidArgument, "stack", "needs at least one tensor");
    for (const T& x : xs) {
      if (!x.defined()) fail(ErrorKind::InvalidArgument, "stack", "an input is undefined");
    }
    const std::int64_t a = normalize_axis(axis, xs[0].rank() + 1, "stack");
    // Ranks first, as the direct stack: an operand of another rank must not
    // get the new axis inserted past its end.
    for (std::size_t i = 1; i < xs.size(); ++i) {
      if (xs[i].rank() != xs[0].rank()) {
        fail(ErrorKind::RankMismatch, "stack", "input ", i, " has rank ", xs[i].rank(),
             " but input 0 has rank ", xs[0].rank(), "; stacked tensors must match");
      }
    }
    std::vector<T> parts;
    parts.reserve(xs.size());
    for (const T& x : xs) {
      SymShape s = sym_shape(x);
      s.insert(s.begin() + a, SymDim(1));
      parts.push_back(reshaped(x, std::move(s)));
    }
    return concatenate_span<T>(parts, a);
  });
}

}  // namespace detail

namespace {
// The runtime of eager operands on which an op records nothing (none is
// tracked, and no capture scope would see the call), or nullptr: then the
// op takes eager_dispatch1, which also reports undefined operands and
// operands of different runtimes. For the untracked case eager_dispatch1
// runs the kind's execute hook on the values and wraps the result; the
// elementwise ops run that hook directly, without copying the operand
// handles (two reference-count updates each) or the op's dispatch.
const EagerRuntimePtr* untracked_runtime(const EagerTensor& a, const EagerTensor* b) {
  const detail::EagerImpl* ia = a.impl().get();
  if (ia == nullptr || ia->node != nullptr) return nullptr;
  if (b != nullptr) {
    const detail::EagerImpl* ib = b->impl().get();
    if (ib == nullptr || ib->node != nullptr || ib->rt != ia->rt) return nullptr;
  }
  if (capture_active() && grad_recording_enabled()) return nullptr;
  return &ia->rt;
}
}  // namespace

template <SurfaceTensor T>
T unary(UnaryOp op, const T& x) {
  if constexpr (std::is_same_v<T, DirectTensor>) {
    const DirectTensor* in[1] = {&x};
    return run_elementwise(prim::Unary{op}, in);
  } else {
    if constexpr (std::is_same_v<T, EagerTensor>) {
      const bool known = static_cast<std::size_t>(op) < static_cast<std::size_t>(kUnaryOpCount);
      if (const EagerRuntimePtr* rt = known ? untracked_runtime(x, nullptr) : nullptr) {
        return detail::make_eager(*rt, detail::direct_unary(op, x.impl()->value, (*rt)->backend()));
      }
    }
    const T in[1] = {x};
    return run_one(elementwise_primitive(op), in);
  }
}

template <SurfaceTensor T>
T binary(BinaryOp op, const T& a, const T& b) {
  if constexpr (std::is_same_v<T, DirectTensor>) {
    const DirectTensor* in[2] = {&a, &b};
    return run_elementwise(prim::Binary{op}, in);
  } else {
    if constexpr (std::is_same_v<T, EagerTensor>) {
      const bool known = static_cast<std::size_t>(op) < static_cast<std::size_t>(kBinaryOpCount);
      if (const EagerRuntimePtr* rt = known ? untracked_runtime(a, &b) : nullptr) {
        return detail::make_eager(
            *rt, detail::direct_binary(op, a.impl()->value, b.impl()->value, (*rt)->backend()));
      }
    }
    const T in[2] = {a, b};
    return run_one(elementwise_primitive(op), in);
  }
}

template <SurfaceTensor T>
T full_like(const T& like, Scalar value) {
  return filled(like, value, like.dtype(), false);
}

template <SurfaceTensor T>
T scalar_like(const T& like, Scalar value) {
  return filled(like, value, scalar_operand_dtype(like.dtype(), value.dtype()), true);
}

template <SurfaceTensor T>
T mvlgamma(const T& x, std::int64_t p) {
  return report_as("mvlgamma", [&]() -> T {
    // The sum unrolls p lgamma terms: bound it so a typo cannot build a
    // billion-op graph.
    if (p < 1 || p > kMaxMvlgammaDimension) {
      fail(ErrorKind::InvalidArgument, "mvlgamma", "dimension p = ", p, " must be in [1, ",
           kMaxMvlgammaDimension, "]");
    }
    T out = lgamma(x);
    for (std::int64_t i = 1; i < p; ++i) out = out + lgamma(x - 0.5 * static_cast<double>(i));
    const auto pd = static_cast<double>(p);
    return out + pd * (pd - 1) / 4 * std::log(std::numbers::pi);
  });
}

template <SurfaceTensor T>
T matmul(const T& a, const T& b) {
  return report_as("matmul", [&]() -> T {
    // Vectors become matrices, batch axes broadcast, then one dot_general with
    // batch dimensions; the vector axes are dropped again at the end.
    if (!a.defined() || !b.defined()) {
      fail(ErrorKind::InvalidArgument, "matmul", "an operand is undefined");
    }
    // The direct matmul's order: dtype before rank (one rule, one kind).
    for (const auto& [side, t] : {std::pair{"a", &a}, std::pair{"b", &b}}) {
      if (is_bool(t->dtype())) {
        fail(ErrorKind::DTypeMismatch, "matmul", side,
             " has dtype bool; contractions need numbers: cast it to an integer or floating dtype");
      }
    }
    if (a.rank() == 0 || b.rank() == 0) {
      fail(ErrorKind::RankMismatch, "matmul", "matmul needs operands of rank >= 1, got ranks ",
           a.rank(), " and ", b.rank());
    }
    DotDims dims;
    dims.lhs_contracting = {1};
    dims.rhs_contracting = {0};
    if (a.rank() == 2 && b.rank() == 2) {
      // The shapes in the message, as the direct tier and the batched case.
      const auto ka = extent_of(a, 1), kb = extent_of(b, 0);
      if (ka && kb && *ka != *kb) {
        fail(ErrorKind::ShapeMismatch, "matmul", "a has shape ", to_string(sym_shape(a)),
             " and b has shape ", to_string(sym_shape(b)), ": the inner extents ", *ka, " and ",
             *kb, " must agree ([m, k] x [k, n])");
      }
      return dot_general(a, b, dims);
    }

    const SymShape as = sym_shape(a), bs = sym_shape(b);
    const T A = a.rank() == 1 ? reshaped(a, SymShape{1, as[0]}) : a;
    const T B = b.rank() == 1 ? reshaped(b, SymShape{bs[0], 1}) : b;
    const SymShape As = sym_shape(A), Bs = sym_shape(B);
    // The inner extents before the batch axes broadcast (as the direct
    // matmul): a mismatch must not first allocate a broadcast operand.
    const auto ka = As[1].try_constant(), kb = Bs[0].try_constant();
    if (ka && kb && *ka != *kb) {
      fail(ErrorKind::ShapeMismatch, "matmul", "a has shape ", to_string(as), " and b has shape ",
           to_string(bs), ": the inner extents ", *ka, " and ", *kb,
           " must agree ([m, k, batch...] x [k, n, batch...])");
    }
    const SymShape batch =
        broadcast_batch(SymShape(As.begin() + 2, As.end()), SymShape(Bs.begin() + 2, Bs.end()));
    auto expand = [&](const T& t, const SymShape& ts) {
      SymShape target{ts[0], ts[1]};
      target.insert(target.end(), batch.begin(), batch.end());
      if (target == ts) return t;
      Axes bdims{0, 1};
      const auto lead = static_cast<std::int64_t>(batch.size() + 2 - ts.size());
      for (std::int64_t i = 2; i < static_cast<std::int64_t>(ts.size()); ++i)
        bdims.push_back(i + lead);
      return broadcast_view(t, std::move(target), std::move(bdims));
    };
    for (std::size_t i = 0; i < batch.size(); ++i) {
      dims.lhs_batch.push_back(static_cast<std::int64_t>(i + 2));
      dims.rhs_batch.push_back(static_cast<std::int64_t>(i + 2));
    }
    T c = dot_general(expand(A, As), expand(B, Bs), dims);
    if (a.rank() == 1 || b.rank() == 1) {
      const SymShape cs = sym_shape(c);
      SymShape s;
      if (a.rank() != 1) s.push_back(cs[0]);
      if (b.rank() != 1) s.push_back(cs[1]);
      s.insert(s.end(), cs.begin() + 2, cs.end());
      c = reshaped(c, std::move(s));
    }
    return c;
  });
}

template <SurfaceTensor T>
T transpose(const T& x, std::int64_t a, std::int64_t b) {
  Axes perm = every_axis(x);
  const auto ia = normalize_axis(a, x.rank(), "transpose");
  const auto ib = normalize_axis(b, x.rank(), "transpose");
  std::swap(perm[static_cast<std::size_t>(ia)], perm[static_cast<std::size_t>(ib)]);
  return permute(x, std::move(perm));
}

template <SurfaceTensor T>
T reshape(const T& x, ShapeArg shape) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, "reshape", "input is undefined");
  SymShape s = resolve_reshape(x, std::move(shape).dims());
  require_constant(x, s, "reshape");
  return detail::apply_primitive<T>(prim::Reshape{std::move(s)}, {x});
}

template <SurfaceTensor T>
T broadcast_in_dim(const T& x, ShapeArg shape, Axes dims) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, "broadcast_in_dim", "input is undefined");
  require_constant(x, shape.dims(), "broadcast_in_dim");
  return detail::apply_primitive<T>(prim::BroadcastInDim{std::move(shape).dims(), std::move(dims)},
                                    {x});
}

template <SurfaceTensor T>
T broadcast_to(const T& x, ShapeArg shape) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, "broadcast_to", "input is undefined");
  const SymShape& s = shape.dims();
  if (x.rank() > static_cast<std::int64_t>(s.size())) {
    fail(ErrorKind::RankMismatch, "broadcast_to", "cannot broadcast rank ", x.rank(), " to rank ",
         s.size());
  }
  require_constant(x, s, "broadcast_to");
  // The target's size before its compatibility, as Tensor::broadcast_to.
  if (const std::optional<Shape> c = try_concrete(s)) (void)shape_numel(*c, "broadcast_to");
  Axes dims;
  const std::int64_t lead = static_cast<std::int64_t>(s.size()) - x.rank();
  for (std::int64_t i = 0; i < x.rank(); ++i) dims.push_back(lead + i);
  return broadcast_in_dim(x, std::move(shape), std::move(dims));
}

// ---- the three tiers ----------------------------------------------------------------------------

#define TF_INSTANTIATE_TIER(T)                                                     \
  template T detail::apply_primitive<T>(prim::Params, std::initializer_list<T>);   \
  template std::vector<T> detail::apply_span<T>(const OpPtr&, std::span<const T>); \
  template T detail::concatenate_span<T>(std::span<const T>, std::int64_t);        \
  template T detail::stack_span<T>(std::span<const T>, std::int64_t);              \
  template T unary<T>(UnaryOp, const T&);                                          \
  template T binary<T>(BinaryOp, const T&, const T&);                              \
  template T full_like<T>(const T&, Scalar);                                       \
  template T scalar_like<T>(const T&, Scalar);                                     \
  template T mvlgamma<T>(const T&, std::int64_t);                                  \
  template T matmul<T>(const T&, const T&);                                        \
  template T transpose<T>(const T&, std::int64_t, std::int64_t);                   \
  template T reshape<T>(const T&, ShapeArg);                                       \
  template T broadcast_in_dim<T>(const T&, ShapeArg, Axes);                        \
  template T broadcast_to<T>(const T&, ShapeArg);

TF_INSTANTIATE_TIER(DirectTensor)
TF_INSTANTIATE_TIER(EagerTensor)
TF_INSTANTIATE_TIER(TracedTensor)
#undef TF_INSTANTIATE_TIER

}  // namespace tenferro
