// Semiring runs of a prepared einsum program (semiring_run.hpp): values,
// tangents, cotangents and the counting tropical semiring, on host memory.

#include "einsum/semiring_run.hpp"

#include <cmath>
#include <functional>
#include <limits>
#include <numeric>

#include "einsum/semiring_gemm.hpp"

namespace tenferro::einsum_detail {
namespace {

constexpr const char* kOp = "einsum";

template <class T>
T zero_of(Semiring s) {
  if constexpr (std::is_same_v<T, bool>) {
    return false;
  } else if constexpr (std::is_floating_point_v<T>) {
    return s == Semiring::MinPlus ? std::numeric_limits<T>::infinity()
                                  : -std::numeric_limits<T>::infinity();
  } else {
    return s == Semiring::MinPlus ? std::numeric_limits<T>::max() : std::numeric_limits<T>::min();
  }
}

template <class T>
T one_of(Semiring) {
  if constexpr (std::is_same_v<T, bool>) {
    return true;
  } else {
    return T{0};
  }
}

// Whether x beats y under the semiring's addition (strictly: ties keep y).
template <class T>
bool beats(Semiring s, T x, T y) {
  if constexpr (std::is_same_v<T, bool>) {
    return x && !y;
  } else {
    return s == Semiring::MinPlus ? x < y : x > y;
  }
}

// f(T{}) for the value type of `dtype` (f32, f64, i64, bool).
template <class F>
void visit(DType dtype, F&& f) {
  switch (dtype) {
    case DType::F32:
      f(float{});
      return;
    case DType::F64:
      f(double{});
      return;
    case DType::I64:
      f(std::int64_t{});
      return;
    case DType::Bool:
      f(bool{});
      return;
    default:
      fail(ErrorKind::Internal, kOp, "no semiring loop for ", name(dtype));
  }
}

template <class F>
void visit_float(DType dtype, F&& f) {
  if (dtype == DType::F32) {
    f(float{});
  } else if (dtype == DType::F64) {
    f(double{});
  } else {
    fail(ErrorKind::DTypeMismatch, kOp, "tropical derivatives need f32 or f64 operands, got ",
         name(dtype), "; convert the operands to a floating dtype");
  }
}

Tensor zeros(const Shape& shape, DType dtype, CpuBackend& cpu) {
  return full(shape.span(), Scalar(0.0), dtype, cpu);
}

// dst (compact) += src (any layout, same shape).
void accumulate(Tensor& dst, const Tensor& src) {
  const Tensor s = src.contiguous();
  visit(dst.dtype(), [&]<class T>(T) {
    if constexpr (!std::is_same_v<T, bool>) {
      T* d = static_cast<T*>(dst.raw_data());
      const T* x = static_cast<const T*>(s.raw_data());
      for (std::int64_t i = 0; i < dst.numel(); ++i) d[i] += x[i];
    }
  });
}

// view += src, for a strided view of a compact tensor.
void add_into_view(const Tensor& view, const Tensor& src) {
  Tensor sum = view.contiguous().clone();
  accumulate(sum, src);
  Tensor::copy_into(sum, view);
}

Axes inverse(const Axes& perm) {
  Axes inv(perm.size(), 0);
  for (std::size_t i = 0; i < perm.size(); ++i)
    inv[static_cast<std::size_t>(perm[i])] = static_cast<std::int64_t>(i);
  return inv;
}

bool has(const Axes& axes, std::int64_t a) {
  return std::find(axes.begin(), axes.end(), a) != axes.end();
}

// One pairwise step as a GEMM over compact operands: lhs -> [free, contracting,
// batch] (m x k x batch), rhs -> [contracting, free, batch] (k x n x batch),
// the result [lhs free, rhs free, batch] as dot_general leaves it.
struct StepLayout {
  Axes lperm, rperm;
  std::int64_t m = 1, n = 1, k = 1;
  Shape batch, out_shape;
  std::size_t lbatch_at = 0, rbatch_at = 0;  // first batch position after the permute
};

StepLayout step_layout(const Tensor& lhs, const Tensor& rhs, const DotDims& d) {
  StepLayout L;
  // Free axes of one side: into its permutation, its m or n and the result.
  auto free_axes = [&](const Tensor& t, const Axes& contracting, const Axes& batch, Axes& perm,
                       std::int64_t& extent) {
    for (std::int64_t a = 0; a < t.rank(); ++a) {
      if (has(contracting, a) || has(batch, a)) continue;
      perm.push_back(a);
      extent *= t.shape()[static_cast<std::size_t>(a)];
      L.out_shape.push_back(t.shape()[static_cast<std::size_t>(a)]);
    }
  };
  // Paired axes (contracting or batch): into both permutations; their
  // extents, which must agree.
  auto paired = [&](const Axes& la, const Axes& ra, const char* what) {
    Shape extents;
    for (std::size_t q = 0; q < la.size(); ++q) {
      const std::int64_t e = lhs.shape()[static_cast<std::size_t>(la[q])];
      if (e != rhs.shape()[static_cast<std::size_t>(ra[q])]) {
        fail(ErrorKind::Internal, kOp, "a ", what, " label's extents differ in a semiring step");
      }
      L.lperm.push_back(la[q]);
      L.rperm.push_back(ra[q]);
      extents.push_back(e);
    }
    return extents;
  };
  free_axes(lhs, d.lhs_contracting, d.lhs_batch, L.lperm, L.m);
  for (const std::int64_t e : paired(d.lhs_contracting, d.rhs_contracting, "contracted")) {
    L.k *= e;
  }
  free_axes(rhs, d.rhs_contracting, d.rhs_batch, L.rperm, L.n);
  L.lbatch_at = L.lperm.size();
  L.rbatch_at = L.rperm.size();
  L.batch = paired(d.lhs_batch, d.rhs_batch, "batch");
  for (const std::int64_t e : L.batch) L.out_shape.push_back(e);
  return L;
}

// A compact tensor read as one column-major matrix with `ld` rows (no batch).
GemmOperand matrix(const Tensor& compact, std::int64_t ld) {
  GemmOperand g;
  g.data = compact.raw_data();
  g.ld = std::max<std::int64_t>(ld, 1);
  return g;
}

GemmOperand operand(const Tensor& compact, std::int64_t ld, std::size_t batch_at) {
  GemmOperand g;
  g.data = compact.raw_data();
  g.trans = false;
  g.ld = std::max<std::int64_t>(ld, 1);
  for (std::size_t q = batch_at; q < compact.shape().size(); ++q) {
    g.batch_strides.push_back(compact.strides()[q]);
  }
  return g;
}

// The semiring one as a k-vector: reduces a [M, k] matrix to M by a GEMM.
Tensor ones(Semiring s, DType dtype, std::int64_t k, CpuBackend& cpu) {
  Tensor v = cpu.empty(std::vector<std::int64_t>{k}, dtype);
  visit(dtype, [&]<class T>(T) {
    T* p = static_cast<T*>(v.raw_data());
    for (std::int64_t i = 0; i < k; ++i) p[i] = one_of<T>(s);
  });
  return v;
}

// A single-operand reduction as a GEMM: x permuted to [kept axes, `axes`],
// an m x k matrix (m the kept extents' product, k the reduced ones').
struct ReduceLayout {
  Axes perm;
  Shape keep;
  std::int64_t m = 1, k = 1;
};

ReduceLayout reduce_layout(const Tensor& x, const Axes& axes) {
  ReduceLayout r;
  for (std::int64_t a = 0; a < x.rank(); ++a) {
    if (has(axes, a)) continue;
    r.perm.push_back(a);
    r.keep.push_back(x.shape()[static_cast<std::size_t>(a)]);
    r.m *= r.keep.back();
  }
  for (const std::int64_t a : axes) {
    r.perm.push_back(a);
    r.k *= x.shape()[static_cast<std::size_t>(a)];
  }
  return r;
}

bool is_identity(const Axes& perm) {
  for (std::size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<std::int64_t>(i)) return false;
  }
  return true;
}

// The program's pairwise steps over a list of items (any representation):
// pair(a, b, step) contracts two of them.
template <class Item, class Pair>
Item contract_steps(const Program& p, std::vector<Item> items, Pair&& pair) {
  for (const PairStep& st : p.steps) {
    const auto i = static_cast<std::size_t>(st.i), j = static_cast<std::size_t>(st.j);
    Item a = items[i], b = items[j];
    items.erase(items.begin() + st.j);
    items.erase(items.begin() + st.i);
    items.push_back(pair(a, b, st));
  }
  return items.front();
}

// The items of one slice: cut(item, axis, index) along each sliced label.
template <class Item, class Cut>
std::vector<Item> slice_items(const Program& p, const std::vector<Item>& list,
                              const std::vector<std::int64_t>& index, Cut&& cut) {
  std::vector<Item> part;
  for (std::size_t q = 0; q < list.size(); ++q) {
    Item v = list[q];
    for (std::size_t r = 0; r < index.size(); ++r) {
      const std::int64_t axis = p.sliced_axes[q][r];
      if (axis >= 0) v = cut(v, axis, index[r]);
    }
    part.push_back(std::move(v));
  }
  return part;
}

// Runs the program's steps over a semiring, with optional tangents and an
// optional tape of backward closures (reverse mode).
class Runner {
 public:
  struct Item {
    Tensor v;
    Tensor t;  // tangent (undefined: zero)
    int id = -1;
  };

  Runner(const Program& p, Semiring s, CpuBackend& cpu, bool tangents, bool tape)
      : p_(p), s_(s), cpu_(cpu), tangents_(tangents), tape_(tape) {}

  // ---- nodes ----------------------------------------------------------------------

  int new_id() {
    if (!tape_) return -1;
    grads_.emplace_back();
    return static_cast<int>(grads_.size()) - 1;
  }

  void give(int id, const Tensor& g) {
    if (id < 0 || !g.defined()) return;
    Tensor& slot = grads_[static_cast<std::size_t>(id)];
    if (!slot.defined()) {
      slot = g.contiguous().clone();
    } else {
      accumulate(slot, g);
    }
  }

  Tensor grad(int id) const { return id < 0 ? Tensor{} : grads_[static_cast<std::size_t>(id)]; }

  Item diagonal(const Item& x, std::int64_t i, std::int64_t j) {
    Item y{x.v.diagonal(0, i, j), x.t.defined() ? x.t.diagonal(0, i, j) : Tensor{}, new_id()};
    if (tape_) {
      back_.push_back([this, x, y, i, j] {
        const Tensor g = grad(y.id);
        if (!g.defined()) return;
        Tensor gx = zeros(x.v.shape(), x.v.dtype(), cpu_);
        Tensor::copy_into(g, gx.diagonal(0, i, j));
        give(x.id, gx);
      });
    }
    return y;
  }

  Item permute(const Item& x, const Axes& perm) {
    Item y{x.v.permute(perm), x.t.defined() ? x.t.permute(perm) : Tensor{}, new_id()};
    if (tape_) {
      back_.push_back([this, x, y, perm] {
        const Tensor g = grad(y.id);
        if (g.defined()) give(x.id, g.permute(inverse(perm)));
      });
    }
    return y;
  }

  Item slice(const Item& x, std::int64_t axis, std::int64_t index) {
    Item y{x.v.slice(axis, index, index + 1),
           x.t.defined() ? x.t.slice(axis, index, index + 1) : Tensor{}, new_id()};
    if (tape_) {
      back_.push_back([this, x, y, axis, index] {
        const Tensor g = grad(y.id);
        if (!g.defined() || x.id < 0) return;
        Tensor& slot = grads_[static_cast<std::size_t>(x.id)];
        if (!slot.defined()) slot = zeros(x.v.shape(), x.v.dtype(), cpu_);
        add_into_view(slot.slice(axis, index, index + 1), g);
      });
    }
    return y;
  }

  // diag_embed(x, 0): [e, rest...] -> [e, e, rest...], the semiring zero off
  // the diagonal.
  Item embed(const Item& x) {
    Shape shape;
    shape.push_back(x.v.shape()[0]);
    for (const std::int64_t e : x.v.shape()) shape.push_back(e);
    Tensor y = cpu_.empty(shape.span(), x.v.dtype());
    visit(x.v.dtype(), [&]<class T>(T) {
      T* p = static_cast<T*>(y.raw_data());
      for (std::int64_t i = 0; i < y.numel(); ++i) p[i] = zero_of<T>(s_);
    });
    Tensor::copy_into(x.v, y.diagonal(0, 0, 1));
    Tensor ty;
    if (x.t.defined()) {
      ty = zeros(shape, x.t.dtype(), cpu_);
      Tensor::copy_into(x.t, ty.diagonal(0, 0, 1));
    }
    Item out{y, ty, new_id()};
    if (tape_) {
      back_.push_back([this, x, out] {
        const Tensor g = grad(out.id);
        if (g.defined()) give(x.id, g.diagonal(0, 0, 1));
      });
    }
    return out;
  }

  // The semiring sum over `axes` of x: a GEMM of [keep, axes] with ones.
  Item reduce(const Item& x, const Axes& axes) {
    const ReduceLayout R = reduce_layout(x.v, axes);
    const Axes& perm = R.perm;
    const Shape& keep_shape = R.keep;
    const std::int64_t m = R.m, k = R.k;
    const Tensor X = x.v.permute(perm).contiguous();
    const Tensor one = ones(s_, x.v.dtype(), k, cpu_);
    Tensor out = cpu_.empty(keep_shape.span(), x.v.dtype());
    const bool argued = tracks();
    Tensor arg = argued ? cpu_.empty(keep_shape.span(), DType::I64) : Tensor{};
    semiring_gemm(s_, x.v.dtype(), m, 1, k, matrix(X, m), matrix(one, k), out.raw_data(), Shape{},
                  argued ? static_cast<std::int64_t*>(arg.raw_data()) : nullptr, &cpu_);
    Item y{out, Tensor{}, new_id()};
    if (tangents_ && x.t.defined()) {
      const Tensor tX = x.t.permute(perm).contiguous();
      y.t = zeros(keep_shape, x.t.dtype(), cpu_);
      visit_float(x.t.dtype(), [&]<class T>(T) {
        const T* src = static_cast<const T*>(tX.raw_data());
        const T* val = static_cast<const T*>(out.raw_data());
        const auto* ix = static_cast<const std::int64_t*>(arg.raw_data());
        T* dst = static_cast<T*>(y.t.raw_data());
        for (std::int64_t i = 0; i < m; ++i) {
          if (val[i] != zero_of<T>(s_)) dst[i] = src[i + m * ix[i]];
        }
      });
    }
    if (tape_) {
      back_.push_back([this, x, y, perm, arg, m, shape = X.shape()] {
        const Tensor g = grad(y.id);
        if (!g.defined()) return;
        Tensor gX = zeros(shape, x.v.dtype(), cpu_);
        visit_float(x.v.dtype(), [&]<class T>(T) {
          const T* gy = static_cast<const T*>(g.raw_data());
          const T* val = static_cast<const T*>(y.v.raw_data());
          const auto* ix = static_cast<const std::int64_t*>(arg.raw_data());
          T* dst = static_cast<T*>(gX.raw_data());
          for (std::int64_t i = 0; i < m; ++i) {
            if (val[i] != zero_of<T>(s_)) dst[i + m * ix[i]] += gy[i];
          }
        });
        give(x.id, gX.permute(inverse(perm)));
      });
    }
    return y;
  }

  Item pair(const Item& a, const Item& b, const PairStep& st) {
    const Item& lhs = st.swap ? b : a;
    const Item& rhs = st.swap ? a : b;
    const StepLayout L = step_layout(lhs.v, rhs.v, st.dims);
    const Tensor A = lhs.v.permute(L.lperm).contiguous();
    const Tensor B = rhs.v.permute(L.rperm).contiguous();
    Tensor C = cpu_.empty(L.out_shape.span(), lhs.v.dtype());
    const bool argued = tracks();
    Tensor arg = argued ? cpu_.empty(L.out_shape.span(), DType::I64) : Tensor{};
    semiring_gemm(s_, lhs.v.dtype(), L.m, L.n, L.k, operand(A, L.m, L.lbatch_at),
                  operand(B, L.k, L.rbatch_at), C.raw_data(), L.batch,
                  argued ? static_cast<std::int64_t*>(arg.raw_data()) : nullptr, &cpu_);
    Item y{C, Tensor{}, new_id()};
    std::int64_t batches = 1;
    for (const std::int64_t e : L.batch) batches *= e;
    const std::int64_t m = L.m, n = L.n, k = L.k;
    if (tangents_ && (lhs.t.defined() || rhs.t.defined())) {
      const Tensor tA = lhs.t.defined() ? lhs.t.permute(L.lperm).contiguous() : Tensor{};
      const Tensor tB = rhs.t.defined() ? rhs.t.permute(L.rperm).contiguous() : Tensor{};
      y.t = zeros(L.out_shape, C.dtype(), cpu_);
      visit_float(C.dtype(), [&]<class T>(T) {
        const T* ta = tA.defined() ? static_cast<const T*>(tA.raw_data()) : nullptr;
        const T* tb = tB.defined() ? static_cast<const T*>(tB.raw_data()) : nullptr;
        const T* val = static_cast<const T*>(C.raw_data());
        const auto* ix = static_cast<const std::int64_t*>(arg.raw_data());
        T* dst = static_cast<T*>(y.t.raw_data());
        for (std::int64_t q = 0; q < batches; ++q) {
          for (std::int64_t j = 0; j < n; ++j) {
            for (std::int64_t i = 0; i < m; ++i) {
              const std::int64_t c = i + m * (j + n * q);
              if (val[c] == zero_of<T>(s_)) continue;
              const std::int64_t p = ix[c];
              T t = 0;
              if (ta != nullptr) t += ta[i + m * (p + k * q)];
              if (tb != nullptr) t += tb[p + k * (j + n * q)];
              dst[c] = t;
            }
          }
        }
      });
    }
    if (tape_) {
      back_.push_back([this, lhs, rhs, y, L, arg, batches, Ashape = A.shape(), Bshape = B.shape()] {
        const Tensor g = grad(y.id);
        if (!g.defined()) return;
        const std::int64_t m = L.m, n = L.n, k = L.k;
        Tensor gA = zeros(Ashape, y.v.dtype(), cpu_);
        Tensor gB = zeros(Bshape, y.v.dtype(), cpu_);
        visit_float(y.v.dtype(), [&]<class T>(T) {
          const T* gy = static_cast<const T*>(g.raw_data());
          const T* val = static_cast<const T*>(y.v.raw_data());
          const auto* ix = static_cast<const std::int64_t*>(arg.raw_data());
          T* da = static_cast<T*>(gA.raw_data());
          T* db = static_cast<T*>(gB.raw_data());
          for (std::int64_t q = 0; q < batches; ++q) {
            for (std::int64_t j = 0; j < n; ++j) {
              for (std::int64_t i = 0; i < m; ++i) {
                const std::int64_t c = i + m * (j + n * q);
                if (val[c] == zero_of<T>(s_)) continue;
                const std::int64_t p = ix[c];
                da[i + m * (p + k * q)] += gy[c];
                db[p + k * (j + n * q)] += gy[c];
              }
            }
          }
        });
        give(lhs.id, gA.permute(inverse(L.lperm)));
        give(rhs.id, gB.permute(inverse(L.rperm)));
      });
    }
    return y;
  }

  // ---- the program ----------------------------------------------------------------

  // The prepared operands (diagonals, then the single-operand sums).
  std::vector<Item> prepare(const std::vector<Item>& xs) {
    std::vector<Item> list;
    for (std::size_t q = 0; q < xs.size(); ++q) {
      Item x = xs[q];
      for (const auto& [i, j] : p_.prep[q].diagonals) x = diagonal(x, i, j);
      if (!p_.prep[q].summed.empty()) x = reduce(x, p_.prep[q].summed);
      list.push_back(std::move(x));
    }
    return list;
  }

  Item contract(std::vector<Item> items) {
    return contract_steps(
        p_, std::move(items),
        [&](const Item& a, const Item& b, const PairStep& st) { return pair(a, b, st); });
  }

  std::vector<Item> sliced(const std::vector<Item>& list, const std::vector<std::int64_t>& index) {
    return slice_items(p_, list, index, [&](const Item& v, std::int64_t axis, std::int64_t i) {
      return slice(v, axis, i);
    });
  }

  // The slices' results combined by the semiring addition (ties: the first
  // slice) and, per element, the slice that won.
  struct Combined {
    Tensor v, t, winner;
  };
  Combined combine_slices(const std::vector<Item>& list) {
    Combined c;
    std::int64_t s = 0;
    for_each_slice(p_, [&](const std::vector<std::int64_t>& index) {
      Item r = contract(sliced(list, index));
      const Tensor rv = r.v.contiguous();
      if (!c.v.defined()) {
        c.v = rv.clone();
        c.winner = zeros(rv.shape(), DType::I64, cpu_);
        if (tangents_)
          c.t = r.t.defined() ? r.t.contiguous().clone() : zeros(rv.shape(), rv.dtype(), cpu_);
      } else {
        const Tensor rt = tangents_ && r.t.defined() ? r.t.contiguous() : Tensor{};
        visit(rv.dtype(), [&]<class T>(T) {
          T* best = static_cast<T*>(c.v.raw_data());
          const T* x = static_cast<const T*>(rv.raw_data());
          auto* win = static_cast<std::int64_t*>(c.winner.raw_data());
          for (std::int64_t e = 0; e < rv.numel(); ++e) {
            if (!beats(s_, x[e], best[e])) continue;
            best[e] = x[e];
            win[e] = s;
            if constexpr (std::is_floating_point_v<T>) {
              if (tangents_)
                static_cast<T*>(c.t.raw_data())[e] =
                    rt.defined() ? static_cast<const T*>(rt.raw_data())[e] : T{0};
            }
          }
        });
      }
      ++s;
    });
    return c;
  }

  Item finish(Item x) {
    if (!is_identity(p_.out_perm)) x = permute(x, p_.out_perm);
    for (const Axes& front : p_.embeds) {
      if (!is_identity(front)) x = permute(x, front);
      x = embed(x);
    }
    if (!is_identity(p_.final_perm)) x = permute(x, p_.final_perm);
    return x;
  }

  std::vector<Item> leaves(const std::vector<Tensor>& xs, const std::vector<Tensor>& ts) {
    std::vector<Item> items;
    for (std::size_t q = 0; q < xs.size(); ++q) {
      items.push_back(Item{xs[q], q < ts.size() ? ts[q] : Tensor{}, new_id()});
    }
    return items;
  }

  // The whole program forward (values, tangents when asked).
  Item forward(const std::vector<Item>& in) {
    std::vector<Item> list = prepare(in);
    Item x;
    if (p_.sliced_extents.empty()) {
      x = contract(std::move(list));
    } else {
      const bool keep = tape_;
      tape_ = false;  // slices record no tape here (vjp replays them)
      Combined c = combine_slices(list);
      tape_ = keep;
      x = Item{c.v, c.t, new_id()};
    }
    return finish(x);
  }

  // Reverse mode: gradients of <ct, result> for every operand.
  std::vector<Tensor> reverse(const std::vector<Tensor>& xs, const Tensor& ct) {
    std::vector<Item> in = leaves(xs, {});
    std::vector<Item> list = prepare(in);
    const std::size_t after_prep = back_.size();
    if (p_.sliced_extents.empty()) {
      Item r = finish(contract(std::move(list)));
      give(r.id, ct);
      run_back(0);
    } else {
      tape_ = false;
      Combined c = combine_slices(list);
      tape_ = true;
      const Item combined{c.v, Tensor{}, new_id()};
      const Item r = finish(combined);
      give(r.id, ct);
      run_back(after_prep);  // the finishing steps only
      const Tensor g = grad(combined.id);
      if (g.defined()) {
        // Each slice that won an element with a cotangent is replayed with a
        // tape and gets the cotangent where it won; its nodes' gradients are
        // dropped once they reached the operands (memory of one slice).
        std::int64_t s = 0;
        for_each_slice(p_, [&](const std::vector<std::int64_t>& index) {
          Tensor masked = zeros(g.shape(), g.dtype(), cpu_);
          bool won = false;
          visit_float(g.dtype(), [&]<class T>(T) {
            const T* src = static_cast<const T*>(g.raw_data());
            const auto* win = static_cast<const std::int64_t*>(c.winner.raw_data());
            T* dst = static_cast<T*>(masked.raw_data());
            for (std::int64_t e = 0; e < g.numel(); ++e) {
              dst[e] = win[e] == s ? src[e] : T{0};
              won = won || dst[e] != T{0};
            }
          });
          ++s;
          if (!won) return;
          const std::size_t start = back_.size(), ids = grads_.size();
          Item part = contract(sliced(list, index));
          give(part.id, masked);
          run_back(start);
          grads_.resize(ids);
        });
      }
      run_back(0);
    }
    std::vector<Tensor> out;
    for (std::size_t q = 0; q < xs.size(); ++q) {
      Tensor g = grad(in[q].id);
      out.push_back(g.defined() ? g : zeros(xs[q].shape(), xs[q].dtype(), cpu_));
    }
    return out;
  }

 private:
  bool tracks() const { return tangents_ || tape_; }
  // Runs the closures recorded from `from` on, last first, and drops them.
  void run_back(std::size_t from) {
    for (std::size_t i = back_.size(); i-- > from;) back_[i]();
    back_.resize(from);
  }

  const Program& p_;
  Semiring s_;
  CpuBackend& cpu_;
  bool tangents_, tape_;
  std::vector<Tensor> grads_;
  std::vector<std::function<void()>> back_;
};

// A fresh result: never the storage of an operand.
Tensor fresh(const Tensor& x, const std::vector<Tensor>& xs) {
  for (const Tensor& o : xs) {
    if (x.storage() == o.storage()) return x.clone();
  }
  return x.contiguous();
}

// ---- the counting tropical semiring -------------------------------------------------

// Values with the number of terms attaining them, run as max-plus (min-plus
// negates the values on the way in and out).
class Counter {
 public:
  struct Item {
    Tensor v, c;  // values, f64 counts
  };
  Counter(const Program& p, CpuBackend& cpu) : p_(p), cpu_(cpu) {}

  Item reduce(const Item& x, const Axes& axes) {
    const ReduceLayout R = reduce_layout(x.v, axes);
    const Shape& keep = R.keep;
    const std::int64_t m = R.m, k = R.k;
    const Tensor V = x.v.permute(R.perm).contiguous(), C = x.c.permute(R.perm).contiguous();
    const Tensor ov = ones(Semiring::MaxPlus, x.v.dtype(), k, cpu_);
    const Tensor oc = full(std::vector<std::int64_t>{k}, Scalar(1.0), DType::F64, cpu_);
    Item y{cpu_.empty(keep.span(), x.v.dtype()), cpu_.empty(keep.span(), DType::F64)};
    counting_gemm(x.v.dtype(), m, 1, k, matrix(V, m), matrix(C, m), matrix(ov, k), matrix(oc, k),
                  y.v.raw_data(), static_cast<double*>(y.c.raw_data()), Shape{}, &cpu_);
    return y;
  }

  Item pair(const Item& a, const Item& b, const PairStep& st) {
    const Item& lhs = st.swap ? b : a;
    const Item& rhs = st.swap ? a : b;
    const StepLayout L = step_layout(lhs.v, rhs.v, st.dims);
    const Tensor Av = lhs.v.permute(L.lperm).contiguous(), Ac = lhs.c.permute(L.lperm).contiguous();
    const Tensor Bv = rhs.v.permute(L.rperm).contiguous(), Bc = rhs.c.permute(L.rperm).contiguous();
    Item y{cpu_.empty(L.out_shape.span(), lhs.v.dtype()),
           cpu_.empty(L.out_shape.span(), DType::F64)};
    counting_gemm(lhs.v.dtype(), L.m, L.n, L.k, operand(Av, L.m, L.lbatch_at),
                  operand(Ac, L.m, L.lbatch_at), operand(Bv, L.k, L.rbatch_at),
                  operand(Bc, L.k, L.rbatch_at), y.v.raw_data(),
                  static_cast<double*>(y.c.raw_data()), L.batch, &cpu_);
    return y;
  }

  Item contract(std::vector<Item> items) {
    return contract_steps(
        p_, std::move(items),
        [&](const Item& a, const Item& b, const PairStep& st) { return pair(a, b, st); });
  }

  Item run(const std::vector<Tensor>& xs) {
    std::vector<Item> list;
    for (std::size_t q = 0; q < xs.size(); ++q) {
      Item x{xs[q], full(xs[q].shape().span(), Scalar(1.0), DType::F64, cpu_)};
      for (const auto& [i, j] : p_.prep[q].diagonals) {
        x = Item{x.v.diagonal(0, i, j), x.c.diagonal(0, i, j)};
      }
      if (!p_.prep[q].summed.empty()) x = reduce(x, p_.prep[q].summed);
      list.push_back(std::move(x));
    }
    Item x;
    if (p_.sliced_extents.empty()) {
      x = contract(std::move(list));
    } else {
      for_each_slice(p_, [&](const std::vector<std::int64_t>& index) {
        std::vector<Item> part =
            slice_items(p_, list, index, [](const Item& v, std::int64_t axis, std::int64_t i) {
              return Item{v.v.slice(axis, i, i + 1), v.c.slice(axis, i, i + 1)};
            });
        Item r = contract(std::move(part));
        const Tensor rv = r.v.contiguous(), rc = r.c.contiguous();
        if (!x.v.defined()) {
          x = Item{rv.clone(), rc.clone()};
          return;
        }
        visit(rv.dtype(), [&]<class T>(T) {
          if constexpr (!std::is_same_v<T, bool>) {
            T* bv = static_cast<T*>(x.v.raw_data());
            auto* bc = static_cast<double*>(x.c.raw_data());
            const T* v = static_cast<const T*>(rv.raw_data());
            const auto* c = static_cast<const double*>(rc.raw_data());
            for (std::int64_t e = 0; e < rv.numel(); ++e) {
              if (v[e] > bv[e]) {
                bv[e] = v[e], bc[e] = c[e];
              } else if (v[e] == bv[e]) {
                bc[e] += c[e];
              }
            }
          }
        });
      });
    }
    if (!is_identity(p_.out_perm)) x = Item{x.v.permute(p_.out_perm), x.c.permute(p_.out_perm)};
    for (const Axes& front : p_.embeds) {
      if (!is_identity(front)) x = Item{x.v.permute(front), x.c.permute(front)};
      Shape shape;
      shape.push_back(x.v.shape()[0]);
      for (const std::int64_t e : x.v.shape()) shape.push_back(e);
      Item y{cpu_.empty(shape.span(), x.v.dtype()), zeros(shape, DType::F64, cpu_)};
      visit(x.v.dtype(), [&]<class T>(T) {
        T* p = static_cast<T*>(y.v.raw_data());
        for (std::int64_t i = 0; i < y.v.numel(); ++i) p[i] = zero_of<T>(Semiring::MaxPlus);
      });
      Tensor::copy_into(x.v, y.v.diagonal(0, 0, 1));
      Tensor::copy_into(x.c, y.c.diagonal(0, 0, 1));
      x = y;
    }
    if (!is_identity(p_.final_perm)) {
      x = Item{x.v.permute(p_.final_perm), x.c.permute(p_.final_perm)};
    }
    return x;
  }

 private:
  const Program& p_;
  CpuBackend& cpu_;
};

// Min-plus values as max-plus ones and back: negated, the min-plus zero
// (+inf, INT64_MAX) becoming the max-plus zero (-inf, INT64_MIN).
Tensor negated(const Tensor& x) {
  Tensor y = x.contiguous().clone();
  visit(y.dtype(), [&]<class T>(T) {
    if constexpr (std::is_same_v<T, bool>) {
      return;
    } else {
      T* p = static_cast<T*>(y.raw_data());
      for (std::int64_t i = 0; i < y.numel(); ++i) {
        if constexpr (std::is_integral_v<T>) {
          p[i] = p[i] == std::numeric_limits<T>::max()   ? std::numeric_limits<T>::min()
                 : p[i] == std::numeric_limits<T>::min() ? std::numeric_limits<T>::max()
                                                         : -p[i];
        } else {
          p[i] = -p[i];
        }
      }
    }
  });
  return y;
}

}  // namespace

CountedTensor run_counting(const Program& p, Semiring s, const std::vector<Tensor>& xs,
                           CpuBackend& cpu) {
  if (s != Semiring::MaxPlus && s != Semiring::MinPlus) {
    fail(ErrorKind::InvalidArgument, "einsum_count", "counting needs options.semiring MaxPlus or ",
         "MinPlus, got ", name(s));
  }
  std::vector<Tensor> in = xs;
  if (s == Semiring::MinPlus) {
    for (Tensor& x : in) x = negated(x);
  }
  Counter counter(p, cpu);
  const Counter::Item r = counter.run(in);
  CountedTensor out{fresh(r.v, in), fresh(r.c, in)};
  if (s == Semiring::MinPlus) out.value = negated(out.value);
  return out;
}

void check_semiring_dtype(Semiring s, DType dtype, const char* op) {
  const bool ok = s == Semiring::OrAnd
                      ? dtype == DType::Bool
                      : dtype == DType::F32 || dtype == DType::F64 || dtype == DType::I64;
  if (!ok) {
    fail(ErrorKind::DTypeMismatch, op, "the ", name(s), " semiring has no ", name(dtype),
         s == Semiring::OrAnd ? "; it contracts bool tensors"
                              : "; it contracts f32, f64 or i64 tensors (convert the operands)");
  }
}

CpuBackend& semiring_backend(Backend& backend, const char* op) {
  auto* cpu = dynamic_cast<CpuBackend*>(&backend);
  if (cpu == nullptr) {
    fail(ErrorKind::Unsupported, op, "semiring contractions run on the CPU backend, not on ",
         backend.kind(), "; move the operands to host memory");
  }
  return *cpu;
}

Tensor run_semiring(const Program& p, Semiring s, const std::vector<Tensor>& xs, CpuBackend& cpu) {
  Runner r(p, s, cpu, false, false);
  return fresh(r.forward(r.leaves(xs, {})).v, xs);
}

Tensor semiring_jvp(const Program& p, Semiring s, const std::vector<Tensor>& xs,
                    const std::vector<Tensor>& ts, CpuBackend& cpu) {
  Runner r(p, s, cpu, true, false);
  const auto out = r.forward(r.leaves(xs, ts));
  if (!out.t.defined()) return zeros(out.v.shape(), out.v.dtype(), cpu);
  return fresh(out.t, ts);
}

std::vector<Tensor> semiring_vjp(const Program& p, Semiring s, const std::vector<Tensor>& xs,
                                 const Tensor& ct, CpuBackend& cpu) {
  Runner r(p, s, cpu, false, true);
  return r.reverse(xs, ct.contiguous());
}

}  // namespace tenferro::einsum_detail
