// tenferro.linalg, tenferro.fft and the einsum core, in NumPy's conventions.
//
// Linear algebra: a Python matrix A (..., m, n) is the C++ tensor of A^T per
// batch, [n, m, ...] (bind.hpp). Each function hands the C++ family A itself
// (mT, a view when untracked) and returns its matrix results transposed back;
// vectors (singular values, eigenvalues, pivots) read the same both ways.

#include "bind.hpp"

namespace tenferro::python {

namespace {

linalg::SpectralOptions spectral(const std::string& gauge, double eta) {
  linalg::SpectralOptions o;
  if (gauge == "strict") {
    o.policy = linalg::GaugePolicy::Strict;
  } else if (gauge == "regularised" || gauge == "regularized") {
    o.policy = linalg::GaugePolicy::Regularised;
  } else {
    throw Error(ErrorKind::InvalidArgument, "linalg",
                "gauge must be 'strict' or 'regularised', got '" + gauge + "'");
  }
  o.eta = eta;
  return o;
}

linalg::Truncation truncation(std::int64_t max_rank, double cutoff, bool relative_cutoff,
                              double max_discarded_weight) {
  linalg::Truncation t;
  t.max_rank = max_rank;
  t.cutoff = cutoff;
  t.relative_cutoff = relative_cutoff;
  t.max_discarded_weight = max_discarded_weight;
  return t;
}

template <class T>
T mat(const py::object& x, const char* op) {
  T t = to<T>(x);
  if (t.rank() < 2) {
    throw Error(ErrorKind::RankMismatch, op,
                "expects a matrix or a batch of matrices (dimension >= 2), got dimension " +
                    std::to_string(t.rank()));
  }
  return mT(t);
}

// A right-hand side: a matrix (..., n, k) is transposed like A; a vector (n,)
// stays a vector.
template <class T>
T rhs(const py::object& b) {
  T t = to<T>(b);
  return t.rank() >= 2 ? mT(t) : t;
}

std::string fft_norm(const py::object& norm) {
  return norm.is_none() ? std::string("backward") : norm.cast<std::string>();
}

// NumPy's fftn axes (default: the last len(s) axes, or all) as C++ axes in
// reverse order, with s reversed alike: NumPy's real transforms halve the
// last listed axis, the C++ family the first.
template <class T>
std::pair<fft::Lengths, Axes> fft_axes(const T& x, const py::object& s, const py::object& axes,
                                       const char* op) {
  const auto r = x.rank();
  std::vector<std::int64_t> py_axes;
  std::vector<std::int64_t> lengths;
  if (!s.is_none()) {
    for (auto e : py::reinterpret_borrow<py::iterable>(s))
      lengths.push_back(e.cast<std::int64_t>());
  }
  if (!axes.is_none()) {
    for (auto a : py::reinterpret_borrow<py::iterable>(axes))
      py_axes.push_back(a.cast<std::int64_t>());
  } else {
    const std::int64_t count = !lengths.empty() ? static_cast<std::int64_t>(lengths.size()) : r;
    for (std::int64_t i = r - count; i < r; ++i) py_axes.push_back(i);
  }
  if (!lengths.empty() && lengths.size() != py_axes.size()) {
    throw Error(ErrorKind::InvalidArgument, op, "s and axes must have the same length");
  }
  fft::Lengths cs;
  Axes ca;
  for (std::size_t i = py_axes.size(); i-- > 0;) {
    ca.push_back(cpp_axis(py_axes[i], r, op));
    if (!lengths.empty()) cs.push_back(lengths[i]);
  }
  return {cs, ca};
}

/// A function of one matrix argument A (NumPy's batch-first layout): `f`
/// gets the C++ tier's matrix (mT of the stored memory, a view) and maps its
/// results back itself.
template <class F>
void def_matrix_fn(py::module_& m, const char* name, F f, const char* doc) {
  m.def(
      name,
      [name, f](const py::object& a) {
        return dispatch(is_traced(a), [&]<class T>() {
          auto t = mat<T>(a, name);
          MaybeRelease<T> r;
          return f(t);
        });
      },
      py::arg("A"), doc);
}

}  // namespace

void init_linalg(py::module_& m) {
  def_matrix_fn(
      m, "inv", [](const auto& t) { return mT(linalg::inv(t)); },
      "The inverse (torch.linalg.inv).");
  def_matrix_fn(
      m, "det", [](const auto& t) { return linalg::det(t); }, "The determinant.");
  def_matrix_fn(
      m, "slogdet",
      [](const auto& t) {
        auto [s, l] = linalg::slogdet(t);
        return std::make_pair(s, l);
      },
      "(sign, logabsdet).");
  m.def(
      "solve",
      [](const py::object& a, const py::object& b, bool left) {
        return dispatch(any_traced(a, b), [&]<class T>() {
          auto ta = mat<T>(a, "solve");
          auto tb = rhs<T>(b);
          MaybeRelease<T> r;
          auto x = linalg::solve(ta, tb, left);
          return tb.rank() >= 2 ? mT(x) : x;
        });
      },
      py::arg("A"), py::arg("B"), py::kw_only(), py::arg("left") = true,
      "X with A X = B (left) or X A = B.");
  m.def(
      "cholesky",
      [](const py::object& a, bool upper) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "cholesky");
          MaybeRelease<T> r;
          return mT(linalg::cholesky(t, upper));
        });
      },
      py::arg("A"), py::kw_only(), py::arg("upper") = false);
  m.def(
      "qr",
      [](const py::object& a, const std::string& mode) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "qr");
          MaybeRelease<T> r;
          auto [q, rr] = linalg::qr(t, mode);
          return std::make_pair(mT(q), mT(rr));
        });
      },
      py::arg("A"), py::arg("mode") = "reduced", "(Q, R); mode 'reduced', 'complete' or 'r'.");
  m.def(
      "svd",
      [](const py::object& a, bool full_matrices, const std::string& gauge, double eta) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "svd");
          const auto opts = spectral(gauge, eta);
          MaybeRelease<T> r;
          auto f = linalg::svd(t, full_matrices, opts);
          return std::make_tuple(mT(f.U), f.S, mT(f.Vh));
        });
      },
      py::arg("A"), py::arg("full_matrices") = true, py::kw_only(), py::arg("gauge") = "strict",
      py::arg("eta") = 1e-8,
      "(U, S, Vh) with A = U diag(S) Vh. gauge: the AD policy for degenerate spectra "
      "('strict' raises GaugeIllDefined, 'regularised' broadens 1/gap by eta).");
  def_matrix_fn(
      m, "svdvals", [](const auto& t) { return linalg::svdvals(t); },
      "The singular values, descending.");
  m.def(
      "eigh",
      [](const py::object& a, const std::string& uplo, const std::string& gauge, double eta) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "eigh");
          const auto opts = spectral(gauge, eta);
          if (uplo != "L" && uplo != "U") {
            throw Error(ErrorKind::InvalidArgument, "eigh", "UPLO must be 'L' or 'U'");
          }
          MaybeRelease<T> r;
          auto f = linalg::eigh(t, uplo[0], opts);
          return std::make_tuple(f.eigenvalues, mT(f.eigenvectors));
        });
      },
      py::arg("A"), py::arg("UPLO") = "L", py::kw_only(), py::arg("gauge") = "strict",
      py::arg("eta") = 1e-8, "(eigenvalues ascending, eigenvectors as columns).");
  m.def(
      "eigvalsh",
      [](const py::object& a, const std::string& uplo) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "eigvalsh");
          MaybeRelease<T> r;
          return linalg::eigvalsh(t, uplo.empty() ? 'L' : uplo[0]);
        });
      },
      py::arg("A"), py::arg("UPLO") = "L");
  m.def(
      "eig",
      [](const py::object& a, const std::string& gauge, double eta) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "eig");
          const auto opts = spectral(gauge, eta);
          MaybeRelease<T> r;
          auto f = linalg::eig(t, opts);
          return std::make_tuple(f.eigenvalues, mT(f.eigenvectors));
        });
      },
      py::arg("A"), py::kw_only(), py::arg("gauge") = "strict", py::arg("eta") = 1e-8);
  def_matrix_fn(
      m, "eigvals", [](const auto& t) { return linalg::eigvals(t); }, "The eigenvalues (complex).");
  m.def(
      "pinv",
      [](const py::object& a, std::optional<double> atol, std::optional<double> rtol,
         bool hermitian) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "pinv");
          MaybeRelease<T> r;
          return mT(linalg::pinv(t, atol, rtol, hermitian));
        });
      },
      py::arg("A"), py::kw_only(), py::arg("atol") = py::none(), py::arg("rtol") = py::none(),
      py::arg("hermitian") = false);
  def_matrix_fn(
      m, "matrix_exp", [](const auto& t) { return mT(linalg::matrix_exp(t)); },
      "The matrix exponential.");
  m.def(
      "matrix_power",
      [](const py::object& a, std::int64_t n) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "matrix_power");
          MaybeRelease<T> r;
          return mT(linalg::matrix_power(t, n));
        });
      },
      py::arg("A"), py::arg("n"));
  m.def(
      "solve_triangular",
      [](const py::object& a, const py::object& b, bool upper, bool left, bool unitriangular) {
        return dispatch(any_traced(a, b), [&]<class T>() {
          auto ta = mat<T>(a, "solve_triangular");
          auto tb = mat<T>(b, "solve_triangular");
          MaybeRelease<T> r;
          return mT(linalg::solve_triangular(ta, tb, upper, left, unitriangular));
        });
      },
      py::arg("A"), py::arg("B"), py::kw_only(), py::arg("upper"), py::arg("left") = true,
      py::arg("unitriangular") = false);
  m.def(
      "lu_factor",
      [](const py::object& a, bool pivot) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "lu_factor");
          MaybeRelease<T> r;
          auto [lu, piv] = linalg::lu_factor(t, pivot);
          return std::make_pair(mT(lu), piv);
        });
      },
      py::arg("A"), py::kw_only(), py::arg("pivot") = true,
      "(LU, pivots) as torch.linalg.lu_factor (pivots 1-based, int32).");
  m.def(
      "lu",
      [](const py::object& a, bool pivot) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "lu");
          MaybeRelease<T> r;
          auto [p, l, u] = linalg::lu(t, pivot);
          return std::make_tuple(mT(p), mT(l), mT(u));
        });
      },
      py::arg("A"), py::kw_only(), py::arg("pivot") = true, "(P, L, U) with A = P L U.");
  m.def(
      "lu_solve",
      [](const py::object& lu, const py::object& piv, const py::object& b, bool left,
         bool adjoint) {
        return dispatch(any_traced(lu, piv, b), [&]<class T>() {
          auto tl = mat<T>(lu, "lu_solve");
          auto tp = to<T>(piv);
          auto tb = mat<T>(b, "lu_solve");
          MaybeRelease<T> r;
          return mT(linalg::lu_solve(tl, tp, tb, left, adjoint));
        });
      },
      py::arg("LU"), py::arg("pivots"), py::arg("B"), py::kw_only(), py::arg("left") = true,
      py::arg("adjoint") = false);
  m.def(
      "multi_dot",
      [](const py::iterable& ms) {
        bool traced = false;
        for (auto x : ms) traced = traced || is_traced(x);
        return dispatch(traced, [&]<class T>() {
          // (A B C)^T = C^T B^T A^T: the C++ product of the stored matrices in
          // reverse order.
          std::vector<T> ts;
          for (auto x : ms) ts.push_back(to<T>(x));
          std::reverse(ts.begin(), ts.end());
          MaybeRelease<T> r;
          return linalg::multi_dot(ts);
        });
      },
      py::arg("tensors"));
  m.def(
      "vector_norm",
      [](const py::object& x, double ord, const py::object& axis, bool keepdims) {
        return dispatch(any_traced(x, axis), [&]<class T>() {
          auto t = to<T>(x);
          auto axes = cpp_axes(axis, t.rank(), "vector_norm");
          MaybeRelease<T> r;
          return linalg::vector_norm(t, ord, axes ? *axes : every_axis(t), keepdims);
        });
      },
      py::arg("x"), py::arg("ord") = 2.0, py::arg("axis") = py::none(),
      py::arg("keepdims") = false);
  m.def(
      "matrix_norm",
      [](const py::object& x, const py::object& ord, std::pair<std::int64_t, std::int64_t> axis,
         bool keepdims) {
        return dispatch(any_traced(x), [&]<class T>() {
          auto t = to<T>(x);
          const Axes dims{cpp_axis(axis.first, t.rank(), "matrix_norm"),
                          cpp_axis(axis.second, t.rank(), "matrix_norm")};
          if (py::isinstance<py::str>(ord)) {
            const auto o = ord.cast<std::string>();
            MaybeRelease<T> r;
            return linalg::matrix_norm(t, o, dims, keepdims);
          }
          const double o = ord.cast<double>();
          MaybeRelease<T> r;
          return linalg::matrix_norm(t, o, dims, keepdims);
        });
      },
      py::arg("A"), py::arg("ord") = "fro", py::arg("axis") = std::make_pair(-2, -1),
      py::arg("keepdims") = false);
  m.def(
      "cond",
      [](const py::object& a, const py::object& p) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "cond");
          if (p.is_none()) {
            MaybeRelease<T> r;
            return linalg::cond(t);
          }
          if (py::isinstance<py::str>(p)) {
            const auto s = p.cast<std::string>();
            MaybeRelease<T> r;
            return linalg::cond(t, s);
          }
          const double v = p.cast<double>();
          MaybeRelease<T> r;
          return linalg::cond(t, v);
        });
      },
      py::arg("A"), py::arg("p") = py::none());
  m.def(
      "svd_truncated",
      [](const py::object& a, std::int64_t max_rank, double cutoff, bool relative_cutoff,
         double max_discarded_weight, const std::string& gauge, double eta) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "svd_truncated");
          const auto tr = truncation(max_rank, cutoff, relative_cutoff, max_discarded_weight);
          const auto opts = spectral(gauge, eta);
          MaybeRelease<T> r;
          auto f = linalg::svd_truncated(t, tr, opts);
          return std::make_tuple(mT(f.U), f.S, mT(f.Vh), f.rank, f.discarded_weight);
        });
      },
      py::arg("A"), py::kw_only(), py::arg("max_rank") = -1, py::arg("cutoff") = 0.0,
      py::arg("relative_cutoff") = true, py::arg("max_discarded_weight") = 0.0,
      py::arg("gauge") = "strict", py::arg("eta") = 1e-8,
      "(U, S, Vh, rank, discarded_weight): the leading singular triplets kept by max_rank, "
      "cutoff (relative to the largest singular value by default) and the discarded weight "
      "bound (see docs/linalg.md).");
  m.def(
      "eigh_truncated",
      [](const py::object& a, std::int64_t max_rank, double cutoff, bool relative_cutoff,
         double max_discarded_weight, const std::string& uplo, const std::string& gauge,
         double eta) {
        return dispatch(any_traced(a), [&]<class T>() {
          auto t = mat<T>(a, "eigh_truncated");
          const auto tr = truncation(max_rank, cutoff, relative_cutoff, max_discarded_weight);
          const auto opts = spectral(gauge, eta);
          MaybeRelease<T> r;
          auto f = linalg::eigh_truncated(t, tr, uplo.empty() ? 'L' : uplo[0], opts);
          return std::make_tuple(f.eigenvalues, mT(f.eigenvectors), f.rank, f.discarded_weight);
        });
      },
      py::arg("A"), py::kw_only(), py::arg("max_rank") = -1, py::arg("cutoff") = 0.0,
      py::arg("relative_cutoff") = true, py::arg("max_discarded_weight") = 0.0,
      py::arg("UPLO") = "L", py::arg("gauge") = "strict", py::arg("eta") = 1e-8,
      "(eigenvalues by descending magnitude, eigenvectors, rank, discarded_weight).");
}

void init_fft(py::module_& m) {
  // One-axis transforms: fft(x, n=None, axis=-1, norm=None).
#define TENFERRO_PY_FFT1(name)                                                                     \
  m.def(                                                                                           \
      #name,                                                                                       \
      [](const py::object& x, std::optional<std::int64_t> n, std::int64_t axis,                    \
         const py::object& norm) {                                                                 \
        const auto nm = fft_norm(norm);                                                            \
        return dispatch(is_traced(x), [&]<class T>() -> T {                                        \
          const T t = to<T>(x);                                                                    \
          const auto a = cpp_axis(axis, t.rank(), #name);                                          \
          MaybeRelease<T> r;                                                                       \
          return fft::name(t, n, a, nm);                                                           \
        });                                                                                        \
      },                                                                                           \
      py::arg("x"), py::arg("n") = py::none(), py::arg("axis") = -1, py::arg("norm") = py::none(), \
      "numpy.fft." #name " / torch.fft." #name " semantics.");
  TENFERRO_PY_FFT1(fft)
  TENFERRO_PY_FFT1(ifft)
  TENFERRO_PY_FFT1(rfft)
  TENFERRO_PY_FFT1(irfft)
  TENFERRO_PY_FFT1(hfft)
  TENFERRO_PY_FFT1(ihfft)
#undef TENFERRO_PY_FFT1
// The n-d transforms ("n": every axis, or the last len(s)) and their "2"
// forms (the last two axes by default).
#define TENFERRO_PY_FFTN(name, suffix, default_axes)                         \
  m.def(                                                                     \
      #name suffix,                                                          \
      [](const py::object& x, const py::object& s, const py::object& axes,   \
         const py::object& norm) {                                           \
        const auto nm = fft_norm(norm);                                      \
        py::object ax = axes.is_none() ? py::object(default_axes) : axes;    \
        return dispatch(is_traced(x), [&]<class T>() -> T {                  \
          const T t = to<T>(x);                                              \
          auto [cs, ca] = fft_axes(t, s, ax, #name suffix);                  \
          MaybeRelease<T> r;                                                 \
          return fft::name##n(t, cs, ca, nm);                                \
        });                                                                  \
      },                                                                     \
      py::arg("x"), py::arg("s") = py::none(), py::arg("axes") = py::none(), \
      py::arg("norm") = py::none(), "numpy.fft / torch.fft semantics.");
#define TENFERRO_PY_FFT_BOTH(name)        \
  TENFERRO_PY_FFTN(name, "n", py::none()) \
  TENFERRO_PY_FFTN(name, "2", py::make_tuple(-2, -1))
  TENFERRO_PY_FFT_BOTH(fft)
  TENFERRO_PY_FFT_BOTH(ifft)
  TENFERRO_PY_FFT_BOTH(rfft)
  TENFERRO_PY_FFT_BOTH(irfft)
  TENFERRO_PY_FFT_BOTH(hfft)
  TENFERRO_PY_FFT_BOTH(ihfft)
#undef TENFERRO_PY_FFT_BOTH
#undef TENFERRO_PY_FFTN
  m.def(
      "fftshift",
      [](const py::object& x, const py::object& axes) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          auto a = cpp_axes(axes, t.rank(), "fftshift");
          MaybeRelease<T> r;
          return fft::fftshift(t, a ? *a : every_axis(t));
        });
      },
      py::arg("x"), py::arg("axes") = py::none());
  m.def(
      "ifftshift",
      [](const py::object& x, const py::object& axes) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          auto a = cpp_axes(axes, t.rank(), "ifftshift");
          MaybeRelease<T> r;
          return fft::ifftshift(t, a ? *a : every_axis(t));
        });
      },
      py::arg("x"), py::arg("axes") = py::none());
}

namespace {

EinsumOptions einsum_options(const py::object& strategy, const py::object& path,
                             const py::object& budget_ms, std::uint64_t seed,
                             const py::object& memory_limit, const py::object& search_work) {
  EinsumOptions o;
  if (!strategy.is_none()) {
    const auto s = strategy.cast<std::string>();
    if (s == "auto") {
      o.strategy = EinsumStrategy::Auto;
    } else if (s == "greedy") {
      o.strategy = EinsumStrategy::Greedy;
    } else if (s == "anneal") {
      o.strategy = EinsumStrategy::Anneal;
    } else if (s == "optimal") {
      o.strategy = EinsumStrategy::Optimal;
    } else {
      throw Error(ErrorKind::InvalidArgument, "einsum",
                  "strategy must be 'auto', 'greedy', 'anneal' or 'optimal', got '" + s + "'");
    }
  }
  if (!path.is_none()) {
    EinsumPath p;
    for (auto step : py::reinterpret_borrow<py::iterable>(path)) {
      auto pair = py::reinterpret_borrow<py::sequence>(step);
      if (pair.size() != 2) {
        throw Error(ErrorKind::InvalidArgument, "einsum",
                    "each path step must be a pair (i, j) of operand positions");
      }
      p.emplace_back(pair[0].cast<std::int64_t>(), pair[1].cast<std::int64_t>());
    }
    o.path = std::move(p);
  }
  if (!budget_ms.is_none()) o.budget_ms = budget_ms.cast<double>();
  o.seed = seed;
  if (!memory_limit.is_none()) o.memory_limit = memory_limit.cast<double>();
  if (!search_work.is_none()) o.search_work = search_work.cast<double>();
  return o;
}

Semiring semiring_of(const py::object& semiring) {
  if (semiring.is_none()) return Semiring::Standard;
  const auto s = semiring.cast<std::string>();
  for (const Semiring k :
       {Semiring::Standard, Semiring::MaxPlus, Semiring::MinPlus, Semiring::OrAnd}) {
    if (s == name(k)) return k;
  }
  throw Error(ErrorKind::InvalidArgument, "einsum",
              "semiring must be 'standard', 'max_plus', 'min_plus' or 'or_and', got '" + s + "'");
}

py::dict plan_dict(const EinsumPlan& p) {
  py::dict d;
  py::list path;
  for (const auto& [i, j] : p.path) path.append(py::make_tuple(i, j));
  d["path"] = path;
  d["flops"] = p.flops;
  d["largest_intermediate"] = p.largest_intermediate;
  d["search_ms"] = p.search_ms;
  d["search_cut_short"] = p.search_cut_short;
  d["search_work"] = p.search_work;
  d["slices"] = p.slices;
  d["sliced_flops"] = p.sliced_flops;
  return d;
}

}  // namespace

void init_einsum(py::module_& m) {
  m.def(
      "_einsum_count",
      [](const std::string& eq, const py::iterable& ops, const py::object& semiring,
         const py::object& memory_limit) {
        EinsumOptions o;
        o.semiring = semiring_of(semiring);
        if (!memory_limit.is_none()) o.memory_limit = memory_limit.cast<double>();
        std::vector<Tensor> ts;
        for (auto x : ops) ts.push_back(to<EagerTensor>(x).value());
        CountedTensor r;
        {
          py::gil_scoped_release release;
          r = einsum_count(eq, ts, runtime()->backend(), o);
        }
        return py::make_tuple(runtime()->tensor(r.value), runtime()->tensor(r.count));
      },
      py::arg("equation"), py::arg("operands"), py::arg("semiring"),
      py::arg("memory_limit") = py::none());
  m.def(
      "_einsum",
      [](const std::string& eq, const py::iterable& ops, const py::object& strategy,
         const py::object& path, const py::object& budget_ms, std::uint64_t seed,
         const py::object& memory_limit, const py::object& search_work,
         const py::object& semiring) {
        auto o = einsum_options(strategy, path, budget_ms, seed, memory_limit, search_work);
        o.semiring = semiring_of(semiring);
        bool traced = false;
        for (auto x : ops) traced = traced || is_traced(x);
        return dispatch(traced, [&]<class T>() -> T {
          std::vector<T> ts;
          for (auto x : ops) ts.push_back(to<T>(x));
          MaybeRelease<T> r;
          // One dtype for every operand: NumPy's result type of them all
          // (a semiring keeps the operands' own dtypes: its errors say which).
          if (!ts.empty() && o.semiring == Semiring::Standard) {
            DType d = ts[0].dtype();
            for (const auto& t : ts) d = numpy_array_promote(d, t.dtype());
            for (auto& t : ts) {
              if (t.dtype() != d) t = convert(t, d);
            }
          }
          return einsum(eq, ts, o);
        });
      },
      py::arg("equation"), py::arg("operands"), py::arg("strategy") = py::none(),
      py::arg("path") = py::none(), py::arg("budget_ms") = py::none(), py::arg("seed") = 0,
      py::arg("memory_limit") = py::none(), py::arg("search_work") = py::none(),
      py::arg("semiring") = py::none());
  m.def(
      "_einsum_path",
      [](const std::string& eq, const std::vector<std::vector<std::int64_t>>& shapes,
         const py::object& strategy, const py::object& path, const py::object& budget_ms,
         std::uint64_t seed, const py::object& memory_limit, const py::object& search_work) {
        std::vector<Shape> ss;
        for (const auto& s : shapes) ss.emplace_back(s.rbegin(), s.rend());
        const auto o = einsum_options(strategy, path, budget_ms, seed, memory_limit, search_work);
        EinsumPlan p;
        {
          py::gil_scoped_release r;
          p = einsum_path(eq, ss, o);
        }
        return plan_dict(p);
      },
      py::arg("equation"), py::arg("shapes"), py::arg("strategy") = py::none(),
      py::arg("path") = py::none(), py::arg("budget_ms") = py::none(), py::arg("seed") = 0,
      py::arg("memory_limit") = py::none(), py::arg("search_work") = py::none());
}

}  // namespace tenferro::python
