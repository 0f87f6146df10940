// The composite functions of the C++ tier (ad/composite.hpp: activations,
// NumPy/PyTorch helpers) and the layout ops not covered elsewhere (pad, tile,
// roll, topk, take_along_axis, scatter_add, diag_embed, special functions),
// in NumPy's axis numbers, for both tiers.

#include "bind.hpp"

namespace tenferro::python {

namespace {

/// One tensor in, one out, with scalar parameters bound by the caller.
template <class F>
py::object unary_fn(const py::object& x, F&& f) {
  return dispatch(is_traced(x), [&]<class T>() -> T {
    const T t = to<T>(x);
    MaybeRelease<T> r;
    return f(t);
  });
}

/// Two tensors in (NumPy broadcasting), one out.
template <class F>
py::object binary_fn(const py::object& a, const py::object& b, F&& f) {
  return dispatch(any_traced(a, b), [&]<class T>() -> T {
    T x = to<T>(a), y = to<T>(b);
    if (is_py_scalar(a) && !is_py_scalar(b)) x = to<T>(a, y.dtype());
    if (is_py_scalar(b) && !is_py_scalar(a)) y = to<T>(b, x.dtype());
    MaybeRelease<T> r;
    numpy_promote(x, y);
    const auto rank = std::max(x.rank(), y.rank());
    return f(pad_rank(x, rank - x.rank()), pad_rank(y, rank - y.rank()));
  });
}

std::vector<std::int64_t> ints(const py::handle& h) {
  std::vector<std::int64_t> out;
  if (py::isinstance<py::int_>(h)) {
    out.push_back(h.cast<std::int64_t>());
    return out;
  }
  for (auto v : py::reinterpret_borrow<py::iterable>(h)) out.push_back(v.cast<std::int64_t>());
  return out;
}

}  // namespace

void init_composite(py::module_& m) {
  // Activations (torch.nn.functional names and defaults).
#define TENFERRO_PY_ACT0(name)                                                                \
  m.def(                                                                                      \
      #name,                                                                                  \
      [](const py::object& x) { return unary_fn(x, [](const auto& t) { return name(t); }); }, \
      py::arg("x"), "torch.nn.functional." #name " (see docs/operators.md).");
  TENFERRO_PY_ACT0(relu)
  TENFERRO_PY_ACT0(relu6)
  TENFERRO_PY_ACT0(selu)
  TENFERRO_PY_ACT0(silu)
  TENFERRO_PY_ACT0(mish)
  TENFERRO_PY_ACT0(hardsigmoid)
  TENFERRO_PY_ACT0(softsign)
  TENFERRO_PY_ACT0(tanhshrink)
  TENFERRO_PY_ACT0(logsigmoid)
  TENFERRO_PY_ACT0(deg2rad)
  TENFERRO_PY_ACT0(rad2deg)
  TENFERRO_PY_ACT0(positive)
#undef TENFERRO_PY_ACT0
  m.def(
      "leaky_relu",
      [](const py::object& x, double slope) {
        return unary_fn(x, [&](const auto& t) { return leaky_relu(t, slope); });
      },
      py::arg("x"), py::arg("negative_slope") = 0.01);
  m.def(
      "elu",
      [](const py::object& x, double alpha) {
        return unary_fn(x, [&](const auto& t) { return elu(t, alpha); });
      },
      py::arg("x"), py::arg("alpha") = 1.0);
  m.def(
      "celu",
      [](const py::object& x, double alpha) {
        return unary_fn(x, [&](const auto& t) { return celu(t, alpha); });
      },
      py::arg("x"), py::arg("alpha") = 1.0);
  m.def(
      "softplus",
      [](const py::object& x, double beta, double threshold) {
        return unary_fn(x, [&](const auto& t) { return softplus(t, beta, threshold); });
      },
      py::arg("x"), py::arg("beta") = 1.0, py::arg("threshold") = 20.0);
  m.def(
      "hardtanh",
      [](const py::object& x, double lo, double hi) {
        return unary_fn(x, [&](const auto& t) { return hardtanh(t, lo, hi); });
      },
      py::arg("x"), py::arg("min_val") = -1.0, py::arg("max_val") = 1.0);
  m.def(
      "hardshrink",
      [](const py::object& x, double l) {
        return unary_fn(x, [&](const auto& t) { return hardshrink(t, l); });
      },
      py::arg("x"), py::arg("lambd") = 0.5);
  m.def(
      "softshrink",
      [](const py::object& x, double l) {
        return unary_fn(x, [&](const auto& t) { return softshrink(t, l); });
      },
      py::arg("x"), py::arg("lambd") = 0.5);
  m.def(
      "threshold",
      [](const py::object& x, double th, double value) {
        return unary_fn(x, [&](const auto& t) { return threshold(t, th, value); });
      },
      py::arg("x"), py::arg("threshold"), py::arg("value"));
  m.def(
      "rrelu",
      [](const py::object& x, double lower, double upper) {
        return unary_fn(x, [&](const auto& t) { return rrelu(t, lower, upper); });
      },
      py::arg("x"), py::arg("lower") = 1.0 / 8, py::arg("upper") = 1.0 / 3,
      "torch's rrelu in evaluation mode (slope (lower + upper) / 2).");
  m.def(
      "prelu",
      [](const py::object& x, const py::object& w) {
        // torch's per-channel weight [C] acts on axis 1 of x (N, C, ...).
        return dispatch(any_traced(x, w), [&]<class T>() -> T {
          const T t = to<T>(x);
          T wt = to<T>(w);
          if (wt.rank() == 1 && t.rank() >= 2) {
            // (C,) acts on Python axis 1, which is C++ axis rank - 2:
            // C++ shape [1, ..., C, 1].
            SymShape s(static_cast<std::size_t>(t.rank()), SymDim(1));
            s[static_cast<std::size_t>(t.rank() - 2)] = sym_shape(wt)[0];
            wt = reshape(wt, s);
          }
          MaybeRelease<T> r;
          return prelu(t, wt);
        });
      },
      py::arg("x"), py::arg("weight"));
  m.def(
      "nan_to_num",
      [](const py::object& x, double nan, std::optional<double> posinf,
         std::optional<double> neginf) {
        return unary_fn(x, [&](const auto& t) { return nan_to_num(t, nan, posinf, neginf); });
      },
      py::arg("x"), py::arg("nan") = 0.0, py::arg("posinf") = py::none(),
      py::arg("neginf") = py::none());
  m.def(
      "logit",
      [](const py::object& x, std::optional<double> eps) {
        return unary_fn(
            x, [&](const auto& t) { return eps ? logit(t, *eps) : unary(UnaryOp::Logit, t); });
      },
      py::arg("x"), py::arg("eps") = py::none());
  m.def(
      "round",
      [](const py::object& x, std::int64_t decimals) {
        return unary_fn(x, [&](const auto& t) {
          return decimals == 0 ? unary(UnaryOp::Round, t) : round(t, decimals);
        });
      },
      py::arg("x"), py::arg("decimals") = 0, "Round half to even, as NumPy.");
  m.def(
      "polygamma",
      [](std::int64_t n, const py::object& x) {
        return unary_fn(x, [&](const auto& t) { return polygamma(n, t); });
      },
      py::arg("n"), py::arg("x"));
  m.def(
      "mvlgamma",
      [](const py::object& x, std::int64_t p) {
        return unary_fn(x, [&](const auto& t) { return mvlgamma(t, p); });
      },
      py::arg("x"), py::arg("p"));
  m.def(
      "frexp",
      [](const py::object& x) {
        return dispatch(is_traced(x), [&]<class T>() {
          const T t = to<T>(x);
          MaybeRelease<T> r;
          return frexp(t);
        });
      },
      py::arg("x"), "(mantissa, exponent) with x = mantissa * 2**exponent.");

  // Binary composites.
#define TENFERRO_PY_BIN(name)                                                            \
  m.def(                                                                                 \
      #name,                                                                             \
      [](const py::object& a, const py::object& b) {                                     \
        return binary_fn(a, b, [](const auto& x, const auto& y) { return name(x, y); }); \
      },                                                                                 \
      py::arg("a"), py::arg("b"), "NumPy/PyTorch " #name " with broadcasting.");
  TENFERRO_PY_BIN(fmax)
  TENFERRO_PY_BIN(fmin)
  TENFERRO_PY_BIN(float_power)
  TENFERRO_PY_BIN(ldexp)
  TENFERRO_PY_BIN(polar)
  TENFERRO_PY_BIN(clamp_min)
  TENFERRO_PY_BIN(clamp_max)
#undef TENFERRO_PY_BIN
  m.def(
      "complex",
      [](const py::object& re, const py::object& im) {
        return binary_fn(re, im, [](const auto& x, const auto& y) { return complex(x, y); });
      },
      py::arg("real"), py::arg("imag"), "real + 1j * imag from two real tensors.");

  // Reductions that skip NaNs, and NumPy's amax/amin.
#define TENFERRO_PY_NANRED(name)                                                     \
  m.def(                                                                             \
      #name,                                                                         \
      [](const py::object& x, const py::object& axis, bool keepdims) {               \
        return dispatch(is_traced(x), [&]<class T>() -> T {                          \
          const T t = to<T>(x);                                                      \
          auto axes = cpp_axes(axis, t.rank(), #name);                               \
          MaybeRelease<T> r;                                                         \
          return axes ? name(t, *axes, keepdims) : name(t, every_axis(t), keepdims); \
        });                                                                          \
      },                                                                             \
      py::arg("x"), py::arg("axis") = py::none(), py::arg("keepdims") = false);
  TENFERRO_PY_NANRED(nansum)
  TENFERRO_PY_NANRED(nanmean)
#undef TENFERRO_PY_NANRED

  // Layout.
  m.def(
      "pad",
      [](const py::object& x, const py::object& pad_width, const py::object& constant_values) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          const auto r = t.rank();
          // NumPy's pad_width: an int, (before, after), or one pair per axis.
          std::vector<std::pair<std::int64_t, std::int64_t>> pw;
          if (py::isinstance<py::int_>(pad_width)) {
            const auto n = pad_width.cast<std::int64_t>();
            pw.assign(static_cast<std::size_t>(r), {n, n});
          } else {
            auto seq = py::reinterpret_borrow<py::sequence>(pad_width);
            if (seq.size() > 0 && py::isinstance<py::int_>(seq[0])) {
              const auto v = ints(seq);
              const std::int64_t lo = v.at(0), hi = v.size() > 1 ? v[1] : v[0];
              pw.assign(static_cast<std::size_t>(r), {lo, hi});
            } else {
              for (auto p : seq) {
                const auto v = ints(p);
                pw.emplace_back(v.at(0), v.size() > 1 ? v[1] : v[0]);
              }
              if (pw.size() == 1) pw.assign(static_cast<std::size_t>(r), pw[0]);
            }
          }
          if (static_cast<std::int64_t>(pw.size()) != r) {
            throw Error(ErrorKind::InvalidArgument, "pad",
                        "pad_width has " + std::to_string(pw.size()) +
                            " pairs for a tensor of dimension " + std::to_string(r));
          }
          Shape lo(static_cast<std::size_t>(r)), hi(static_cast<std::size_t>(r));
          for (std::int64_t d = 0; d < r; ++d) {
            const auto& p = pw[static_cast<std::size_t>(r - 1 - d)];
            if (p.first < 0 || p.second < 0) {
              throw Error(ErrorKind::InvalidArgument, "pad", "pad widths must be >= 0");
            }
            lo[static_cast<std::size_t>(d)] = p.first;
            hi[static_cast<std::size_t>(d)] = p.second;
          }
          const Scalar value = scalar_of(constant_values);
          MaybeRelease<T> rel;
          return pad(t, lo, hi, value);
        });
      },
      py::arg("x"), py::arg("pad_width"), py::arg("constant_values") = 0,
      "numpy.pad in 'constant' mode.");
  m.def(
      "tile",
      [](const py::object& x, const py::object& reps) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          auto v = ints(reps);
          Shape c(v.rbegin(), v.rend());
          MaybeRelease<T> r;
          return tile(t, c);
        });
      },
      py::arg("x"), py::arg("reps"));
  m.def(
      "roll",
      [](const py::object& x, const py::object& shift, const py::object& axis) {
        return dispatch(is_traced(x), [&]<class T>() -> T {
          const T t = to<T>(x);
          auto shifts = ints(shift);
          if (axis.is_none()) {
            if (shifts.size() != 1) {
              throw Error(ErrorKind::InvalidArgument, "roll", "give one shift when axis is None");
            }
            // NumPy rolls the C-order flattening: C++ column-major.
            SymDim n(1);
            for (const auto& d : sym_shape(t)) n = n * d;
            const T flat = reshape(t, SymShape{n});
            MaybeRelease<T> r;
            return reshape(roll(flat, shifts[0]), sym_shape(t));
          }
          auto axes = *cpp_axes(axis, t.rank(), "roll");
          if (shifts.size() == 1 && axes.size() > 1) shifts.assign(axes.size(), shifts[0]);
          if (shifts.size() != axes.size()) {
            throw Error(ErrorKind::InvalidArgument, "roll",
                        "shift and axis must have the same length");
          }
          MaybeRelease<T> r;
          return roll(t, std::span<const std::int64_t>(shifts), axes);
        });
      },
      py::arg("x"), py::arg("shift"), py::arg("axis") = py::none());
  m.def(
      "topk",
      [](const py::object& x, std::int64_t k, std::int64_t axis, bool largest) {
        return dispatch(is_traced(x), [&]<class T>() {
          const T t = to<T>(x);
          const auto a = cpp_axis(axis, t.rank(), "topk");
          MaybeRelease<T> r;
          return topk(t, k, a, largest);
        });
      },
      py::arg("x"), py::arg("k"), py::arg("axis") = -1, py::arg("largest") = true,
      "(values, indices) of the k largest (or smallest) entries along axis, sorted (torch.topk).");
  m.def(
      "take_along_axis",
      [](const py::object& x, const py::object& index, std::int64_t axis) {
        return dispatch(any_traced(x, index), [&]<class T>() -> T {
          const T t = to<T>(x);
          const T i = to<T>(index);
          const auto a = cpp_axis(axis, t.rank(), "take_along_axis");
          MaybeRelease<T> r;
          return take_along_axis(t, i, a);
        });
      },
      py::arg("x"), py::arg("indices"), py::arg("axis"));
  m.def(
      "scatter_add",
      [](const py::object& x, std::int64_t axis, const py::object& index, const py::object& src) {
        return dispatch(any_traced(x, index, src), [&]<class T>() -> T {
          const T t = to<T>(x);
          const T i = to<T>(index);
          const T s = to<T>(src);
          const auto a = cpp_axis(axis, t.rank(), "scatter_add");
          MaybeRelease<T> r;
          return scatter_add(t, a, i, s);
        });
      },
      py::arg("x"), py::arg("axis"), py::arg("index"), py::arg("src"),
      "torch.scatter_add: out[..., index[i], ...] += src[i] along axis.");
  m.def(
      "diag_embed",
      [](const py::object& x, std::int64_t offset) {
        // Python's (..., n) -> (..., n, n) is the C++ [n, ...] -> [n, n, ...]
        // seen transposed: the offset changes sign.
        return unary_fn(x, [&](const auto& t) { return diag_embed(t, -offset); });
      },
      py::arg("x"), py::arg("offset") = 0, "torch.diag_embed: the last axis onto a diagonal.");
}

}  // namespace tenferro::python
