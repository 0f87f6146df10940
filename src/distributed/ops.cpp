// Ops on sharded tensors with sharding rules (distributed.hpp): elementwise
// arithmetic with NumPy's broadcasting, map, sums, reshape.

#include <algorithm>
#include <numeric>
#include <optional>

#include "distributed/internal.hpp"
#include "distributed/relayout.hpp"
#include "tenferro/ad/ops.hpp"

namespace tenferro::dist {

using detail::check_placements;
using detail::local_shape;
using detail::shape_of;

namespace {

template <class T>
void check_same_mesh(const BasicDTensor<T>& a, const BasicDTensor<T>& b, const char* op) {
  if (!(a.mesh() == b.mesh())) {
    fail(ErrorKind::ContextMismatch, op, "the operands live on different meshes (",
         a.mesh().to_string(), " and ", b.mesh().to_string(),
         "); redistribute one onto the other's mesh first");
  }
}

/// The broadcast of two global shapes (NumPy's rule, right-aligned).
Shape broadcast_shapes(const Shape& a, const Shape& b, const char* op) {
  const std::size_t n = std::max(a.size(), b.size());
  Shape out(n, 1);
  for (std::size_t k = 0; k < n; ++k) {
    const std::int64_t x = k < n - a.size() ? 1 : a[k - (n - a.size())];
    const std::int64_t y = k < n - b.size() ? 1 : b[k - (n - b.size())];
    if (x != y && x != 1 && y != 1) {
      fail(ErrorKind::ShapeMismatch, op, "global shapes ", shape_to_string(a.span()), " and ",
           shape_to_string(b.span()), " do not broadcast (axis ", k, " of the result: ", x, " vs ",
           y, ")");
    }
    out[k] = x == 1 ? y : x;
  }
  return out;
}

Placements without_partial(const Placements& ps) {
  Placements r = ps;
  for (auto& p : r)
    if (p.kind == Placement::Kind::Partial) p = Replicate();
  return r;
}

bool any_partial(const Placements& ps) {
  return std::any_of(ps.begin(), ps.end(),
                     [](const Placement& p) { return p.kind == Placement::Kind::Partial; });
}

enum class Bin { Add, Sub, Mul, Div };

/// The result axis a Shard placement of `x` names when it shards an axis
/// that is not broadcast against the result `out` (right-aligned), or -1.
template <class T>
std::int64_t result_axis(const BasicDTensor<T>& x, const Placement& p, const Shape& out) {
  if (!p.is_shard()) return -1;
  const std::int64_t k = p.axis + static_cast<std::int64_t>(out.size()) - x.rank();
  return x.shape()[static_cast<std::size_t>(p.axis)] == out[static_cast<std::size_t>(k)] ? k : -1;
}

/// The placements of operand `x` for a result placed as `target`: sharded
/// like the result where x has the full axis, replicated where it is
/// broadcast (or absent), pending sums kept.
template <class T>
Placements operand_placements(const BasicDTensor<T>& x, const Placements& target,
                              const Shape& out) {
  Placements r = target;
  for (auto& p : r) {
    if (!p.is_shard()) continue;
    const std::int64_t k = p.axis - (static_cast<std::int64_t>(out.size()) - x.rank());
    if (k < 0 || x.shape()[static_cast<std::size_t>(k)] != out[static_cast<std::size_t>(p.axis)]) {
      p = Replicate();
    } else {
      p.axis = k;
    }
  }
  return r;
}

template <class T>
BasicDTensor<T> binary(const BasicDTensor<T>& a0, const BasicDTensor<T>& b0, Bin op) {
  const char* name = op == Bin::Add   ? "add"
                     : op == Bin::Sub ? "sub"
                     : op == Bin::Mul ? "mul"
                                      : "div";
  check_same_mesh(a0, b0, name);
  const Shape out = broadcast_shapes(a0.shape(), b0.shape(), name);
  BasicDTensor<T> a = a0, b = b0;
  // Per mesh axis: a's sharding where it shards a full axis of the result,
  // else b's, else a pending sum of pending sums (add, sub), else replicated.
  // A Partial operand of a product or quotient is summed first.
  const bool linear = op == Bin::Add || op == Bin::Sub;
  Placements target(a.placements().size(), Replicate());
  std::vector<std::int64_t> used;
  for (std::size_t m = 0; m < target.size(); ++m) {
    const Placement& pa = a.placements()[m];
    const Placement& pb = b.placements()[m];
    const std::int64_t ka = result_axis(a, pa, out), kb = result_axis(b, pb, out);
    const auto free = [&](std::int64_t k) {
      return k >= 0 && std::find(used.begin(), used.end(), k) == used.end();
    };
    if (free(ka)) {
      target[m] = Shard(ka, pa.block);
    } else if (free(kb)) {
      target[m] = Shard(kb, pb.block);
    } else if (linear && pa.kind == Placement::Kind::Partial &&
               pb.kind == Placement::Kind::Partial) {
      target[m] = Partial();
    }
    if (target[m].is_shard()) used.push_back(target[m].axis);
  }
  const Placements ta = operand_placements(a, target, out);
  const Placements tb = operand_placements(b, target, out);
  if (ta != a.placements()) a = redistribute(a, ta);
  if (tb != b.placements()) b = redistribute(b, tb);
  T y;
  switch (op) {
    case Bin::Add:
      y = a.local() + b.local();
      break;
    case Bin::Sub:
      y = a.local() - b.local();
      break;
    case Bin::Mul:
      y = a.local() * b.local();
      break;
    case Bin::Div:
      y = a.local() / b.local();
      break;
  }
  return BasicDTensor<T>(out, a.mesh(), target, y);
}

/// The placements a reshape from `from` to `to` (column-major) gives
/// without moving data: each sharded axis must form a group of its own
/// (the axes between which the products of extents agree, extent-1 axes
/// aside) mapping to one axis of the same extent. None otherwise.
std::optional<Placements> kept_shards(const Shape& from, const Shape& to, const Placements& ps) {
  // Each non-unit input axis's group: the output axis when the group is that
  // one axis onto one axis of the same extent, else -1.
  for (const auto e : from)
    if (e == 0) return std::nullopt;
  std::vector<std::int64_t> maps_to(from.size(), -1);
  std::size_t i = 0, j = 0;
  while (i < from.size() || j < to.size()) {
    // Skip unit axes, then grow the group until the products agree.
    while (i < from.size() && from[i] == 1) ++i;
    while (j < to.size() && to[j] == 1) ++j;
    if (i == from.size() || j == to.size()) break;
    const std::size_t i0 = i, j0 = j;
    std::int64_t pi = from[i++], pj = to[j++];
    while (pi != pj) {
      if (pi < pj) {
        pi *= from[i++];
      } else {
        pj *= to[j++];
      }
    }
    std::size_t ni = 0, nj = 0;
    for (std::size_t k = i0; k < i; ++k) ni += from[k] != 1;
    for (std::size_t k = j0; k < j; ++k) nj += to[k] != 1;
    if (ni == 1 && nj == 1) {
      std::size_t jj = j0;
      while (to[jj] == 1) ++jj;
      maps_to[i0] = static_cast<std::int64_t>(jj);
    }
  }
  Placements out = ps;
  for (auto& p : out) {
    if (!p.is_shard()) continue;
    const auto a = static_cast<std::size_t>(p.axis);
    if (from[a] == 1 || maps_to[a] < 0) return std::nullopt;
    p.axis = maps_to[a];
  }
  return out;
}

}  // namespace

// ---- ops ---------------------------------------------------------------------------------

template <class T>
BasicDTensor<T> operator+(const BasicDTensor<T>& a, const BasicDTensor<T>& b) {
  return binary(a, b, Bin::Add);
}
template <class T>
BasicDTensor<T> operator-(const BasicDTensor<T>& a, const BasicDTensor<T>& b) {
  return binary(a, b, Bin::Sub);
}
template <class T>
BasicDTensor<T> operator*(const BasicDTensor<T>& a, const BasicDTensor<T>& b) {
  return binary(a, b, Bin::Mul);
}
template <class T>
BasicDTensor<T> operator/(const BasicDTensor<T>& a, const BasicDTensor<T>& b) {
  return binary(a, b, Bin::Div);
}
template <class T>
BasicDTensor<T> operator*(const BasicDTensor<T>& a, Scalar b) {
  return BasicDTensor<T>(a.shape(), a.mesh(), a.placements(), a.local() * b);
}
template <class T>
BasicDTensor<T> operator-(const BasicDTensor<T>& a) {
  return BasicDTensor<T>(a.shape(), a.mesh(), a.placements(), -a.local());
}

template <class T>
BasicDTensor<T> map(const BasicDTensor<T>& x,
                    const std::type_identity_t<std::function<T(const T&)>>& fn, bool linear) {
  BasicDTensor<T> in = x;
  if (!linear && any_partial(x.placements())) in = redistribute(x, without_partial(x.placements()));
  T y = fn(in.local());
  if (!y.defined() || shape_of(y) != shape_of(in.local())) {
    fail(ErrorKind::ShapeMismatch, "map", "the function must keep the local shape (elementwise)");
  }
  return BasicDTensor<T>(in.shape(), in.mesh(), in.placements(), y);
}

template <class T>
BasicDTensor<T> reshape(const BasicDTensor<T>& x, Shape shape, Placements placements) {
  std::int64_t a = 1, b = 1;
  for (const auto e : x.shape()) a *= e;
  for (const auto e : shape) b *= e;
  if (a != b) {
    fail(ErrorKind::ShapeMismatch, "dist::reshape", "cannot reshape ",
         shape_to_string(x.shape().span()), " (", a, " elements) to ",
         shape_to_string(shape.span()), " (", b, " elements)");
  }
  check_placements(placements, x.mesh(), static_cast<std::int64_t>(shape.size()), "dist::reshape");
  // Shards stay in place when every sharded axis passes through the
  // reshape untouched: then each rank reshapes its block and only a change
  // of placements is left to redistribute.
  if (const auto kept = kept_shards(x.shape(), shape, x.placements())) {
    BasicDTensor<T> y(shape, x.mesh(), *kept,
                      tenferro::reshape(x.local(), ShapeArg(local_shape(shape, x.mesh(), *kept))));
    return *kept == placements ? y : redistribute(y, std::move(placements));
  }
  // Otherwise every element goes from its holder to its new holders in one
  // all-to-all.
  const detail::RelayoutParams params{x.mesh().comm().handle(), x.mesh().shape(), x.shape(), shape,
                                      x.placements(),           placements};
  T local = detail::relayout(params, x.local());
  return BasicDTensor<T>(std::move(shape), x.mesh(), std::move(placements), std::move(local));
}

template <class T>
BasicDTensor<T> sum(const BasicDTensor<T>& x) {
  std::vector<std::int64_t> axes(static_cast<std::size_t>(x.rank()));
  std::iota(axes.begin(), axes.end(), 0);
  return sum(x, axes, false);
}

template <class T>
BasicDTensor<T> sum(const BasicDTensor<T>& x, std::vector<std::int64_t> axes, bool keepdim) {
  std::vector<bool> reduced(static_cast<std::size_t>(x.rank()), false);
  for (auto& a : axes) {
    a = normalize_axis(a, x.rank(), "sum");
    reduced[static_cast<std::size_t>(a)] = true;
  }
  // New index of each kept axis.
  std::vector<std::int64_t> new_index(static_cast<std::size_t>(x.rank()), -1);
  Shape global;
  for (std::int64_t d = 0, k = 0; d < x.rank(); ++d) {
    if (reduced[static_cast<std::size_t>(d)] && !keepdim) continue;
    new_index[static_cast<std::size_t>(d)] = k++;
    global.push_back(reduced[static_cast<std::size_t>(d)] ? 1
                                                          : x.shape()[static_cast<std::size_t>(d)]);
  }
  Placements ps = x.placements();
  for (auto& p : ps) {
    if (!p.is_shard()) continue;
    if (reduced[static_cast<std::size_t>(p.axis)]) {
      p = Partial();  // each rank summed its part
    } else {
      p.axis = new_index[static_cast<std::size_t>(p.axis)];
    }
  }
  const T y = tenferro::sum(x.local(), Axes(axes), keepdim);
  return BasicDTensor<T>(global, x.mesh(), ps, y);
}

#define TENFERRO_DIST_INSTANTIATE(T)                                                           \
  template BasicDTensor<T> operator+(const BasicDTensor<T>&, const BasicDTensor<T>&);          \
  template BasicDTensor<T> operator-(const BasicDTensor<T>&, const BasicDTensor<T>&);          \
  template BasicDTensor<T> operator*(const BasicDTensor<T>&, const BasicDTensor<T>&);          \
  template BasicDTensor<T> operator/(const BasicDTensor<T>&, const BasicDTensor<T>&);          \
  template BasicDTensor<T> operator*(const BasicDTensor<T>&, Scalar);                          \
  template BasicDTensor<T> operator-(const BasicDTensor<T>&);                                  \
  template BasicDTensor<T> map(const BasicDTensor<T>&,                                         \
                               const std::type_identity_t<std::function<T(const T&)>>&, bool); \
  template BasicDTensor<T> sum(const BasicDTensor<T>&);                                        \
  template BasicDTensor<T> reshape(const BasicDTensor<T>&, Shape, Placements);                 \
  template BasicDTensor<T> sum(const BasicDTensor<T>&, std::vector<std::int64_t>, bool);
TENFERRO_DIST_INSTANTIATE(EagerTensor)
TENFERRO_DIST_INSTANTIATE(TracedTensor)
#undef TENFERRO_DIST_INSTANTIATE

}  // namespace tenferro::dist
