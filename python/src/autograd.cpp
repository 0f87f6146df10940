// Eager AD from Python: requires_grad, backward, .grad, no_grad and the
// functional transforms over Python callables.

#include "bind.hpp"

namespace tenferro::python {

namespace {

using Release = py::gil_scoped_release;

EagerTensor call_fn(const py::function& f, const EagerTensor& x) {
  py::object y = f(x);
  if (!py::isinstance<EagerTensor>(y)) {
    throw Error(ErrorKind::InvalidArgument, "grad",
                "the function must return a tenferro.Tensor, got " +
                    std::string(py::str(py::type::of(y).attr("__name__"))));
  }
  return y.cast<EagerTensor>();
}

EagerFn fn_of(const py::function& f) {
  return [f](const EagerTensor& x) { return call_fn(f, x); };
}

EagerTensor leaf_input(const py::object& x) {
  EagerTensor t = as_tensor(x);
  if (!is_inexact(t.dtype())) {
    throw Error(
        ErrorKind::DTypeMismatch, "grad",
        "inputs must have a floating or complex dtype, got " + std::string(dtype_name(t.dtype())));
  }
  return t;
}

/// f(x) on a traced value (inside tenferro.jit).
TracedTensor traced_call(const py::function& f, const TracedTensor& x) {
  py::object y = f(x);
  if (!is_traced(y)) {
    throw Error(ErrorKind::InvalidArgument, "autograd",
                "inside tenferro.jit the function must return a traced value of its input");
  }
  return y.cast<TracedTensor>();
}

// A no-grad context manager (tenferro.no_grad()).
struct NoGrad {
  std::unique_ptr<NoGradGuard> guard;
};

}  // namespace

void init_autograd(py::module_& m) {
  auto cls = py::reinterpret_borrow<py::class_<EagerTensor>>(m.attr("Tensor"));
  cls.def_property(
         "requires_grad", &EagerTensor::requires_grad,
         [](EagerTensor& t, bool on) {
           if (on == t.requires_grad()) return;
           if (!on) {
             if (!t.is_leaf()) {
               throw Error(ErrorKind::RuntimeState, "requires_grad",
                           "requires_grad can only be turned off on a leaf; use "
                           "t.detach() for a tensor with history");
             }
             t = t.detach();
             return;
           }
           t.requires_grad_(true);
         },
         "Whether AD records operations on this tensor.")
      .def(
          "requires_grad_",
          [](const py::object& self, bool on) -> py::object {
            // Returns the object itself: the fast path's result objects are
            // not in pybind11's instance registry (tensor_object.cpp), so a
            // returned reference would become a second object.
            auto& t = self.cast<EagerTensor&>();
            if (on) {
              t.requires_grad_(true);
            } else if (t.requires_grad()) {
              t = t.detach();
            }
            return self;
          },
          py::arg("requires_grad") = true,
          "Marks a leaf as requiring grad (in place); returns the tensor.")
      .def_property_readonly("is_leaf", &EagerTensor::is_leaf)
      .def_property(
          "grad",
          [](const EagerTensor& t) -> py::object {
            if (!t.has_grad()) return py::none();
            return py::cast(t.grad());
          },
          [](EagerTensor& t, const py::object& v) {
            if (!v.is_none()) {
              throw Error(ErrorKind::InvalidArgument, "grad",
                          "only None can be assigned to .grad (it clears the gradient)");
            }
            t.clear_grad();
          },
          "The accumulated gradient of a leaf, or None before a backward() reaches it.")
      .def("zero_grad", &EagerTensor::clear_grad,
           "Clears the accumulated gradient (sets .grad to None).")
      .def(
          "backward",
          [](const EagerTensor& t, const py::object& gradient) {
            if (gradient.is_none()) {
              Release r;
              t.backward();
            } else {
              EagerTensor seed = as_tensor(gradient);
              Release r;
              t.backward(seed);
            }
          },
          py::arg("gradient") = py::none(),
          "Reverse mode from a real scalar (or with an explicit gradient); accumulates into "
          "the .grad of the leaves it reaches. The graph is kept: clear grads between steps.")
      .def("detach", &EagerTensor::detach, "The same value, without history (shares memory).")
      .def("_assign", [](EagerTensor& t, const py::object& v) {
        EagerTensor nv = as_tensor(v, t.dtype());
        t.assign_(nv.value());
      });

  py::class_<NoGrad>(m, "no_grad", "Context manager: operations inside are not recorded.")
      .def(py::init<>())
      .def("__enter__", [](NoGrad& g) { g.guard = std::make_unique<NoGradGuard>(); })
      .def("__exit__", [](NoGrad& g, const py::args&) { g.guard.reset(); });
  m.def("is_grad_enabled", &grad_recording_enabled);

  auto ad = m.def_submodule("autograd", "Functional transforms over Python callables.");
  ad.def(
      "grad",
      [](const py::function& f, const py::args& xs, bool allow_unused) -> py::object {
        if (xs.size() == 0) {
          throw Error(ErrorKind::InvalidArgument, "grad", "give at least one input");
        }
        if (is_traced(xs[0])) {
          // Inside tenferro.jit: the gradient graph of f's traced result.
          std::vector<TracedTensor> ins;
          py::tuple args(xs.size());
          for (std::size_t i = 0; i < xs.size(); ++i) {
            ins.push_back(to<TracedTensor>(xs[i]));
            args[i] = py::cast(ins.back());
          }
          py::object y = f(*args);
          if (!is_traced(y)) {
            throw Error(ErrorKind::InvalidArgument, "grad",
                        "the function must return a traced value of its traced inputs");
          }
          const auto yt = y.cast<TracedTensor>();
          const GradOptions opts{.allow_unused = allow_unused};
          if (ins.size() == 1) return py::cast(grad(yt, ins[0], opts, runtime()->ad()));
          py::tuple out(ins.size());
          for (std::size_t i = 0; i < ins.size(); ++i)
            out[i] = py::cast(grad(yt, ins[i], opts, runtime()->ad()));
          return out;
        }
        if (xs.size() == 1) {
          return py::cast(
              grad(fn_of(f), leaf_input(xs[0]), GradOptions{.allow_unused = allow_unused}));
        }
        std::vector<EagerTensor> ins;
        for (auto x : xs) ins.push_back(leaf_input(py::reinterpret_borrow<py::object>(x)));
        auto g = grad_many(
            [f](std::span<const EagerTensor> a) {
              py::tuple args(a.size());
              for (std::size_t i = 0; i < a.size(); ++i) args[i] = py::cast(a[i]);
              py::object y = f(*args);
              return y.cast<EagerTensor>();
            },
            ins);
        py::tuple out(g.size());
        for (std::size_t i = 0; i < g.size(); ++i) {
          if (g[i]) {
            out[i] = py::cast(*g[i]);
          } else if (allow_unused) {
            out[i] = py::cast(zeros_like(ins[i]));
          } else {
            throw Error(ErrorKind::InvalidArgument, "grad",
                        "the function does not depend on input " + std::to_string(i) +
                            "; pass allow_unused=True for zeros");
          }
        }
        return out;
      },
      py::arg("f"), py::kw_only(), py::arg("allow_unused") = false,
      "The gradient of scalar f at the inputs (one tensor, or a tuple for several inputs). "
      "Differentiable: grad of grad works.");
  ad.def(
      "vjp",
      [](const py::function& f, const py::object& x, const py::object& v) -> py::object {
        if (is_traced(x)) {
          const TracedTensor xt = to<TracedTensor>(x);
          const TracedTensor y = traced_call(f, xt);
          const TracedTensor ct =
              v.is_none() ? traced_full(y.shape(), 1, y.dtype()) : to<TracedTensor>(v, y.dtype());
          auto g = vjp(y, ct, xt, runtime()->ad());
          return py::make_tuple(y, g ? *g : traced_full(xt.shape(), 0, xt.dtype()));
        }
        EagerTensor xt = leaf_input(x);
        EagerTensor out;
        std::optional<EagerTensor> ct;
        if (v.is_none()) {
          // Scalar outputs: the cotangent is one.
          auto r = vjp(fn_of(f), xt, EagerTensor());
          out = r.output;
          ct = r.cotangent;
        } else {
          auto r = vjp(fn_of(f), xt, as_tensor(v));
          out = r.output;
          ct = r.cotangent;
        }
        return py::make_tuple(out, ct ? py::cast(*ct) : py::cast(zeros_like(xt)));
      },
      py::arg("f"), py::arg("x"), py::arg("v") = py::none(),
      "(f(x), J^T v); v may be omitted for a scalar output (torch.autograd.functional.vjp).");
  ad.def(
      "jvp",
      [](const py::function& f, const py::object& x, const py::object& v) -> py::object {
        if (is_traced(x)) {
          const TracedTensor xt = to<TracedTensor>(x);
          const TracedTensor y = traced_call(f, xt);
          const TracedTensor vt = v.is_none() ? traced_full(xt.shape(), 1, xt.dtype())
                                              : to<TracedTensor>(v, xt.dtype());
          auto t = jvp(y, xt, vt, runtime()->ad());
          return py::make_tuple(y, t ? *t : traced_full(y.shape(), 0, y.dtype()));
        }
        EagerTensor xt = leaf_input(x);
        EagerTensor vt = v.is_none() ? ones_like(xt) : as_tensor(v, xt.dtype());
        auto r = jvp(fn_of(f), xt, vt);
        py::object tangent = r.tangent ? py::cast(*r.tangent) : py::cast(zeros_like(r.output));
        return py::make_tuple(r.output, tangent);
      },
      py::arg("f"), py::arg("x"), py::arg("v") = py::none(),
      "(f(x), J v), forward mode (torch.autograd.functional.jvp).");
  ad.def(
      "hvp",
      [](const py::function& f, const py::object& x, const py::object& v) -> py::object {
        if (is_traced(x)) {
          const TracedTensor xt = to<TracedTensor>(x);
          const TracedTensor y = traced_call(f, xt);
          return py::make_tuple(y, hvp(y, xt, to<TracedTensor>(v, xt.dtype()),
                                       HvpMode::ForwardOverReverse, runtime()->ad()));
        }
        EagerTensor xt = leaf_input(x);
        EagerTensor vt = as_tensor(v, xt.dtype());
        EagerFn fx = fn_of(f);
        EagerTensor out = fx(xt);
        EagerTensor hv = jvp_tangent([fx](const EagerTensor& z) { return grad(fx, z); }, xt, vt);
        return py::make_tuple(out, hv);
      },
      py::arg("f"), py::arg("x"), py::arg("v"),
      "(f(x), H v) by forward-over-reverse (torch.autograd.functional.hvp).");
}

}  // namespace tenferro::python
