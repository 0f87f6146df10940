// Control flow and fixed points from Python (tenferro/ad/control_flow.hpp).
// Inside tenferro.jit they build the traced ops; outside it cond, while_loop
// and scan run as plain Python control flow on tensors (tenferro/__init__.py)
// and fixed_point runs the eager tier's, with implicit derivatives.
//
// A carry, a state or a scanned input is one tensor or a tuple of tensors.
// Python's axis 0 is the C++ tier's last axis, so scan runs over axis 0 as
// NumPy users (and jax.lax.scan) expect.

#include "tenferro/ad/control_flow.hpp"
#include "bind.hpp"

namespace tenferro::python {

namespace {

/// One tensor or a tuple/list of them, as a list of tier T; `single` tells
/// which it was so results go back the same way.
template <class T>
std::vector<T> tensors_of(const py::handle& h, bool& single, const char* what) {
  std::vector<T> out;
  if (py::isinstance<py::tuple>(h) || py::isinstance<py::list>(h)) {
    single = false;
    for (auto item : py::reinterpret_borrow<py::sequence>(h)) out.push_back(to<T>(item));
    return out;
  }
  if (h.is_none()) {
    throw Error(ErrorKind::InvalidArgument, what, "got None where tensors were expected");
  }
  single = true;
  out.push_back(to<T>(h));
  return out;
}

template <class T>
py::object to_py(const std::vector<T>& values, bool single) {
  if (single && values.size() == 1) return py::cast(values[0]);
  py::tuple t(values.size());
  for (std::size_t i = 0; i < values.size(); ++i) t[i] = py::cast(values[i]);
  return t;
}

template <class T>
std::vector<T> returned(const py::object& out, std::size_t count, const char* op,
                        const char* what) {
  bool single = false;
  std::vector<T> r = tensors_of<T>(out, single, op);
  if (r.size() != count) {
    throw Error(ErrorKind::InvalidArgument, op,
                std::string("the function returns ") + std::to_string(r.size()) + " " + what +
                    " values but gets " + std::to_string(count) + "; return the same structure");
  }
  return r;
}

FixedPointOptions fixed_point_options(double tol, std::int64_t max_iter, bool throw_on_failure,
                                      const py::object& linear_tol,
                                      const py::object& linear_max_iter,
                                      const std::string& linear_solver) {
  FixedPointOptions o;
  if (linear_solver == "auto") {
    o.linear_solver = FixedPointLinearSolver::Auto;
  } else if (linear_solver == "iterate") {
    o.linear_solver = FixedPointLinearSolver::Iterate;
  } else if (linear_solver == "direct") {
    o.linear_solver = FixedPointLinearSolver::Direct;
  } else {
    throw Error(ErrorKind::InvalidArgument, "fixed_point",
                "linear_solver must be 'auto', 'iterate' or 'direct', got '" + linear_solver + "'");
  }
  o.tol = tol;
  o.max_iter = max_iter;
  o.throw_on_failure = throw_on_failure;
  if (!linear_tol.is_none()) o.linear_tol = linear_tol.cast<double>();
  if (!linear_max_iter.is_none()) o.linear_max_iter = linear_max_iter.cast<std::int64_t>();
  return o;
}

template <class T>
py::object fixed_point_py(const py::function& f, const py::object& x0, const py::args& params,
                          const FixedPointOptions& options, bool full_output) {
  bool single = false;
  const std::vector<T> start = tensors_of<T>(x0, single, "fixed_point");
  std::vector<T> ps;
  for (auto p : params) ps.push_back(to<T>(p));
  auto call = [&](std::span<const T> x, std::span<const T> p) {
    py::tuple args(p.size() + 1);
    args[0] = to_py(std::vector<T>(x.begin(), x.end()), single);
    for (std::size_t i = 0; i < p.size(); ++i) args[i + 1] = py::cast(p[i]);
    return returned<T>(f(*args), x.size(), "fixed_point", "state");
  };
  FixedPointResult<T> r = fixed_point(call, start, ps, options);
  py::object value = to_py(r.value, single);
  if (!full_output) return value;
  return py::make_tuple(value, r.iterations, r.residual, r.converged);
}

}  // namespace

void init_control_flow(py::module_& m) {
  m.def(
      "_cond",
      [](const py::object& pred, const py::function& then_fn, const py::function& else_fn,
         const py::args& operands) {
        std::vector<TracedTensor> ops;
        for (auto o : operands) ops.push_back(to<TracedTensor>(o));
        bool single = false;
        auto branch = [&](const py::function& fn) {
          return [&](std::span<const TracedTensor> a) {
            py::tuple args(a.size());
            for (std::size_t i = 0; i < a.size(); ++i) args[i] = py::cast(a[i]);
            bool one = false;
            auto r = tensors_of<TracedTensor>(fn(*args), one, "cond");
            single = one;
            return r;
          };
        };
        auto outs = cond(to<TracedTensor>(pred), branch(then_fn), branch(else_fn), ops);
        return to_py(outs, single);
      },
      py::arg("pred"), py::arg("then_fn"), py::arg("else_fn"));
  m.def(
      "_while_loop",
      [](const py::function& cond_fn, const py::function& body_fn, const py::object& init,
         std::int64_t max_iterations) {
        bool single = false;
        const auto carry = tensors_of<TracedTensor>(init, single, "while_loop");
        auto pack = [&](std::span<const TracedTensor> c) {
          return to_py(std::vector<TracedTensor>(c.begin(), c.end()), single);
        };
        auto outs = while_loop(
            [&](std::span<const TracedTensor> c) { return to<TracedTensor>(cond_fn(pack(c))); },
            [&](std::span<const TracedTensor> c) {
              return returned<TracedTensor>(body_fn(pack(c)), c.size(), "while_loop", "carry");
            },
            carry, WhileOptions{max_iterations});
        return to_py(outs, single);
      },
      py::arg("cond_fn"), py::arg("body_fn"), py::arg("init"), py::arg("max_iterations") = -1);
  m.def(
      "_scan",
      [](const py::function& f, const py::object& init, const py::object& xs, std::int64_t length,
         bool reverse, std::int64_t checkpoint_every) {
        bool carry_single = false, xs_single = false, ys_single = false, no_ys = false;
        const auto carry = tensors_of<TracedTensor>(init, carry_single, "scan");
        std::vector<TracedTensor> x;
        if (!xs.is_none()) x = tensors_of<TracedTensor>(xs, xs_single, "scan");
        auto body = [&](std::span<const TracedTensor> c, std::span<const TracedTensor> xt) {
          py::object xo = xs.is_none()
                              ? py::none()
                              : to_py(std::vector<TracedTensor>(xt.begin(), xt.end()), xs_single);
          py::object out =
              f(to_py(std::vector<TracedTensor>(c.begin(), c.end()), carry_single), xo);
          if (!py::isinstance<py::tuple>(out) || py::len(out) != 2) {
            throw Error(ErrorKind::InvalidArgument, "scan",
                        "the function must return a pair (carry, y); y may be None");
          }
          auto pair = out.cast<py::tuple>();
          ScanStep st;
          st.carry = returned<TracedTensor>(pair[0], c.size(), "scan", "carry");
          no_ys = pair[1].is_none();
          if (!no_ys) st.ys = tensors_of<TracedTensor>(pair[1], ys_single, "scan");
          return st;
        };
        ScanOptions o;
        o.reverse = reverse;
        o.checkpoint_every = checkpoint_every;
        o.length = length;
        const ScanResult r = scan(body, carry, x, o);
        return py::make_tuple(to_py(r.carry, carry_single),
                              no_ys ? py::object(py::none()) : to_py(r.ys, ys_single));
      },
      py::arg("f"), py::arg("init"), py::arg("xs"), py::arg("length") = -1,
      py::arg("reverse") = false, py::arg("checkpoint_every") = 0);
  m.def(
      "_fixed_point",
      [](const py::function& f, const py::object& x0, const py::args& params, double tol,
         std::int64_t max_iter, bool throw_on_failure, const py::object& linear_tol,
         const py::object& linear_max_iter, const std::string& linear_solver, bool full_output) {
        const FixedPointOptions o = fixed_point_options(tol, max_iter, throw_on_failure, linear_tol,
                                                        linear_max_iter, linear_solver);
        bool traced = is_traced(x0);
        if (py::isinstance<py::tuple>(x0) || py::isinstance<py::list>(x0)) {
          for (auto x : py::reinterpret_borrow<py::sequence>(x0)) traced |= is_traced(x);
        }
        for (auto p : params) traced |= is_traced(p);
        if (traced) return fixed_point_py<TracedTensor>(f, x0, params, o, full_output);
        return fixed_point_py<EagerTensor>(f, x0, params, o, full_output);
      },
      py::arg("f"), py::arg("x0"), py::arg("tol") = 1e-10, py::arg("max_iter") = 1000,
      py::arg("throw_on_failure") = true, py::arg("linear_tol") = py::none(),
      py::arg("linear_max_iter") = py::none(), py::arg("linear_solver") = "auto",
      py::arg("full_output") = false);
}

}  // namespace tenferro::python
