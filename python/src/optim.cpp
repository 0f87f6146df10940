// tenferro._tenferro.optim: the C++ optimisers (tenferro/optim/optim.hpp)
// over Python parameter lists. python/tenferro/optim.py wraps them in
// torch.optim's classes (param_groups, closures); this file only binds them,
// lets hyperparameters change between steps, and hosts the Python closure
// L-BFGS calls.

#include <cstdint>
#include <exception>
#include <optional>
#include <string>
#include <vector>

#include "bind.hpp"

namespace tenferro::python {

namespace {

using Release = py::gil_scoped_release;

std::vector<EagerTensor> params_of(const py::iterable& params) {
  std::vector<EagerTensor> out;
  for (auto p : params) {
    if (!py::isinstance<EagerTensor>(p)) {
      throw Error(ErrorKind::InvalidArgument, "optim",
                  "parameter " + std::to_string(out.size()) + " is a " +
                      std::string(py::str(py::type::of(p).attr("__name__"))) +
                      ", not a tenferro.Tensor");
    }
    out.push_back(p.cast<EagerTensor>());
  }
  return out;
}

// Hyperparameters set between steps (torch's param_groups[i]["lr"] = ...).
// The candidate options go through a throwaway optimiser over the same
// parameters, so they are validated exactly as the constructor does (same
// kinds, same messages), then replace the optimiser's own. options() is a
// reference to a non-const member that step() reads afresh on every call,
// so writing through it is defined behaviour.
template <class Opt, class Options, class Edit>
void reconfigure(Opt& opt, Edit&& edit) {
  Options candidate = opt.options();
  edit(candidate);
  const Opt probe(opt.params(), candidate);
  const_cast<Options&>(opt.options()) = probe.options();
}

optim::LineSearch line_search_of(const py::object& name) {
  if (name.is_none()) return optim::LineSearch::None;
  if (py::isinstance<py::str>(name)) {
    const auto n = name.cast<std::string>();
    if (n == "strong_wolfe") return optim::LineSearch::StrongWolfe;
    if (n == "none") return optim::LineSearch::None;
  }
  throw Error(ErrorKind::InvalidArgument, "optim.lbfgs",
              "line_search_fn must be None or \"strong_wolfe\", got " +
                  std::string(py::str(py::repr(name))));
}

// The loss a torch-style closure returned (it has already called backward()).
double closure_loss(const py::object& r, const std::vector<EagerTensor>& params) {
  if (py::isinstance<EagerTensor>(r)) {
    const auto& t = r.cast<const EagerTensor&>();
    if (t.numel() != 1 || is_complex(t.dtype()) || !is_inexact(t.dtype())) {
      throw Error(ErrorKind::InvalidArgument, "optim.lbfgs",
                  "the closure must return the loss as a real floating scalar, got a " +
                      std::string(dtype_name(t.dtype())) + " tensor of " +
                      std::to_string(t.numel()) + " elements");
    }
    if (t.requires_grad()) {
      bool any_grad = false;
      for (const EagerTensor& p : params) any_grad = any_grad || p.has_grad();
      if (!any_grad) {
        throw Error(ErrorKind::RuntimeState, "optim.lbfgs",
                    "no parameter has a gradient after the closure ran: the closure must call "
                    "loss.backward() before it returns the loss (torch.optim.LBFGS's protocol)");
      }
    }
    return t.item<double>();
  }
  if (r.is_none() || !(py::isinstance<py::float_>(r) || py::isinstance<py::int_>(r) ||
                       py::hasattr(r, "__float__"))) {
    throw Error(ErrorKind::InvalidArgument, "optim.lbfgs",
                "the closure must return the loss (a scalar tensor or a float), got " +
                    std::string(py::str(py::type::of(r).attr("__name__"))));
  }
  return py::float_(r).cast<double>();
}

// Thrown through Lbfgs::step when the Python closure failed; the closure's
// own exception is kept in an exception_ptr and rethrown once the GIL is
// held again.
struct ClosureFailed {};

// One Lbfgs::step with torch's closure protocol: the closure clears the
// grads, computes the loss, calls backward() and returns the loss. The C++
// step calls backward() on what its loss function returns, so that function
// returns a fresh leaf holding the loss value: its backward reaches no
// parameter, and the gradients are the closure's. Returns what the first
// closure call returned, as torch does.
py::object lbfgs_step(optim::Lbfgs& opt, const py::function& closure) {
  py::object first;
  std::exception_ptr failure;
  const auto loss = [&]() -> EagerTensor {
    py::gil_scoped_acquire gil;
    try {
      py::object r = closure();
      const double value = closure_loss(r, opt.params());
      if (!first) first = r;
      return runtime()->variable(Tensor::scalar(Scalar(value)));
    } catch (...) {
      failure = std::current_exception();
      throw ClosureFailed{};
    }
  };
  try {
    Release release;
    opt.step(loss);
  } catch (const ClosureFailed&) {
    std::rethrow_exception(failure);
  }
  return first;
}

}  // namespace

void init_optim(py::module_& m) {
  py::class_<optim::Optimizer>(m, "Optimizer",
                               "The C++ optimiser base: parameters and their gradients.")
      .def_property_readonly(
          "params",
          [](const optim::Optimizer& o) {
            py::list out;
            for (const EagerTensor& p : o.params()) out.append(py::cast(p));
            return out;
          },
          "The parameters (new Python objects on the same tensors).")
      .def("zero_grad", &optim::Optimizer::zero_grad, "Clears every parameter's gradient.")
      .def_property_readonly(
          "has_grad",
          [](const optim::Optimizer& o) {
            for (const EagerTensor& p : o.params()) {
              if (p.has_grad()) return true;
            }
            return false;
          },
          "Whether any parameter has an accumulated gradient.")
      .def_property_readonly("step_count", &optim::Optimizer::step_count, "Completed steps.");

  using optim::Sgd, optim::SgdOptions, optim::Adam, optim::AdamOptions, optim::Lbfgs,
      optim::LbfgsOptions;
  using OptD = std::optional<double>;
  using OptB = std::optional<bool>;
  using OptI = std::optional<int>;

  py::class_<Sgd, optim::Optimizer>(m, "Sgd", "tenferro::optim::Sgd (torch.optim.SGD's rule).")
      .def(py::init([](const py::iterable& params, double lr, double momentum, double dampening,
                       double weight_decay, bool nesterov, bool maximize) {
             return new Sgd(params_of(params),
                            SgdOptions{lr, momentum, dampening, weight_decay, nesterov, maximize});
           }),
           py::arg("params"), py::kw_only(), py::arg("lr") = 1e-3, py::arg("momentum") = 0.0,
           py::arg("dampening") = 0.0, py::arg("weight_decay") = 0.0, py::arg("nesterov") = false,
           py::arg("maximize") = false)
      .def("step",
           [](Sgd& o) {
             Release release;
             o.step();
           })
      .def(
          "configure",
          [](Sgd& o, OptD lr, OptD momentum, OptD dampening, OptD weight_decay, OptB nesterov,
             OptB maximize) {
            reconfigure<Sgd, SgdOptions>(o, [&](SgdOptions& c) {
              c.lr = lr.value_or(c.lr);
              c.momentum = momentum.value_or(c.momentum);
              c.dampening = dampening.value_or(c.dampening);
              c.weight_decay = weight_decay.value_or(c.weight_decay);
              c.nesterov = nesterov.value_or(c.nesterov);
              c.maximize = maximize.value_or(c.maximize);
            });
          },
          py::kw_only(), py::arg("lr") = py::none(), py::arg("momentum") = py::none(),
          py::arg("dampening") = py::none(), py::arg("weight_decay") = py::none(),
          py::arg("nesterov") = py::none(), py::arg("maximize") = py::none(),
          "Changes the given options for the next steps (validated as the constructor does).")
      .def_property_readonly("lr", [](const Sgd& o) { return o.options().lr; })
      .def_property_readonly("momentum", [](const Sgd& o) { return o.options().momentum; })
      .def_property_readonly("dampening", [](const Sgd& o) { return o.options().dampening; })
      .def_property_readonly("weight_decay", [](const Sgd& o) { return o.options().weight_decay; })
      .def_property_readonly("nesterov", [](const Sgd& o) { return o.options().nesterov; })
      .def_property_readonly("maximize", [](const Sgd& o) { return o.options().maximize; });

  py::class_<Adam, optim::Optimizer>(m, "Adam", "tenferro::optim::Adam (torch.optim.Adam's rule).")
      .def(
          py::init([](const py::iterable& params, double lr, double beta1, double beta2, double eps,
                      double weight_decay, bool decoupled, bool amsgrad, bool maximize) {
            return new Adam(params_of(params), AdamOptions{lr, beta1, beta2, eps, weight_decay,
                                                           decoupled, amsgrad, maximize});
          }),
          py::arg("params"), py::kw_only(), py::arg("lr") = 1e-3, py::arg("beta1") = 0.9,
          py::arg("beta2") = 0.999, py::arg("eps") = 1e-8, py::arg("weight_decay") = 0.0,
          py::arg("decoupled_weight_decay") = false, py::arg("amsgrad") = false,
          py::arg("maximize") = false)
      .def("step",
           [](Adam& o) {
             Release release;
             o.step();
           })
      // amsgrad and the kind of weight decay stay as constructed: the running
      // maximum is allocated with the moments.
      .def(
          "configure",
          [](Adam& o, OptD lr, OptD beta1, OptD beta2, OptD eps, OptD weight_decay, OptB maximize) {
            reconfigure<Adam, AdamOptions>(o, [&](AdamOptions& c) {
              c.lr = lr.value_or(c.lr);
              c.beta1 = beta1.value_or(c.beta1);
              c.beta2 = beta2.value_or(c.beta2);
              c.eps = eps.value_or(c.eps);
              c.weight_decay = weight_decay.value_or(c.weight_decay);
              c.maximize = maximize.value_or(c.maximize);
            });
          },
          py::kw_only(), py::arg("lr") = py::none(), py::arg("beta1") = py::none(),
          py::arg("beta2") = py::none(), py::arg("eps") = py::none(),
          py::arg("weight_decay") = py::none(), py::arg("maximize") = py::none(),
          "Changes the given options for the next steps (validated as the constructor does).")
      .def_property_readonly("lr", [](const Adam& o) { return o.options().lr; })
      .def_property_readonly("beta1", [](const Adam& o) { return o.options().beta1; })
      .def_property_readonly("beta2", [](const Adam& o) { return o.options().beta2; })
      .def_property_readonly("eps", [](const Adam& o) { return o.options().eps; })
      .def_property_readonly("weight_decay", [](const Adam& o) { return o.options().weight_decay; })
      .def_property_readonly("decoupled_weight_decay",
                             [](const Adam& o) { return o.options().decoupled_weight_decay; })
      .def_property_readonly("amsgrad", [](const Adam& o) { return o.options().amsgrad; })
      .def_property_readonly("maximize", [](const Adam& o) { return o.options().maximize; });

  py::class_<optim::AdamW, Adam>(m, "AdamW", "tenferro::optim::AdamW (torch.optim.AdamW's rule).")
      .def(py::init([](const py::iterable& params, double lr, double beta1, double beta2,
                       double eps, double weight_decay, bool amsgrad, bool maximize) {
             return new optim::AdamW(
                 params_of(params),
                 optim::AdamW::Options{lr, beta1, beta2, eps, weight_decay, amsgrad, maximize});
           }),
           py::arg("params"), py::kw_only(), py::arg("lr") = 1e-3, py::arg("beta1") = 0.9,
           py::arg("beta2") = 0.999, py::arg("eps") = 1e-8, py::arg("weight_decay") = 1e-2,
           py::arg("amsgrad") = false, py::arg("maximize") = false);

  py::class_<Lbfgs, optim::Optimizer>(
      m, "Lbfgs", "tenferro::optim::Lbfgs (torch.optim.LBFGS's algorithm and stopping rules).")
      .def(py::init([](const py::iterable& params, double lr, int max_iter, OptI max_eval,
                       double tolerance_grad, double tolerance_change, int history_size,
                       const py::object& line_search_fn) {
             return new Lbfgs(
                 params_of(params),
                 LbfgsOptions{lr, max_iter, max_eval.value_or(-1), tolerance_grad, tolerance_change,
                              history_size, line_search_of(line_search_fn)});
           }),
           py::arg("params"), py::kw_only(), py::arg("lr") = 1.0, py::arg("max_iter") = 20,
           py::arg("max_eval") = py::none(), py::arg("tolerance_grad") = 1e-7,
           py::arg("tolerance_change") = 1e-9, py::arg("history_size") = 100,
           py::arg("line_search_fn") = py::none())
      .def("step", &lbfgs_step, py::arg("closure"),
           "Runs up to max_iter iterations; the closure clears the grads, computes the loss, "
           "calls backward() and returns the loss. Returns the first closure call's result.")
      // history_size stays as constructed (the history is trimmed as it grows).
      .def(
          "configure",
          [](Lbfgs& o, OptD lr, OptI max_iter, OptI max_eval, OptD tolerance_grad,
             OptD tolerance_change, std::optional<py::object> line_search_fn) {
            const std::optional<optim::LineSearch> search =
                line_search_fn ? std::optional(line_search_of(*line_search_fn)) : std::nullopt;
            reconfigure<Lbfgs, LbfgsOptions>(o, [&](LbfgsOptions& c) {
              c.lr = lr.value_or(c.lr);
              c.max_iter = max_iter.value_or(c.max_iter);
              c.max_eval = max_eval.value_or(c.max_eval);
              c.tolerance_grad = tolerance_grad.value_or(c.tolerance_grad);
              c.tolerance_change = tolerance_change.value_or(c.tolerance_change);
              c.line_search = search.value_or(c.line_search);
            });
          },
          py::kw_only(), py::arg("lr") = py::none(), py::arg("max_iter") = py::none(),
          py::arg("max_eval") = py::none(), py::arg("tolerance_grad") = py::none(),
          py::arg("tolerance_change") = py::none(), py::arg("line_search_fn") = py::none(),
          "Changes the given options for the next steps; line_search_fn: \"none\" or "
          "\"strong_wolfe\" (None leaves it).")
      .def_property_readonly("lr", [](const Lbfgs& o) { return o.options().lr; })
      .def_property_readonly("max_iter", [](const Lbfgs& o) { return o.options().max_iter; })
      .def_property_readonly("max_eval", [](const Lbfgs& o) { return o.options().max_eval; })
      .def_property_readonly("tolerance_grad",
                             [](const Lbfgs& o) { return o.options().tolerance_grad; })
      .def_property_readonly("tolerance_change",
                             [](const Lbfgs& o) { return o.options().tolerance_change; })
      .def_property_readonly("history_size",
                             [](const Lbfgs& o) { return o.options().history_size; })
      .def_property_readonly("line_search_fn",
                             [](const Lbfgs& o) -> py::object {
                               if (o.options().line_search == optim::LineSearch::StrongWolfe) {
                                 return py::str("strong_wolfe");
                               }
                               return py::none();
                             })
      .def_property_readonly("iterations", &Lbfgs::iterations,
                             "Iterations over every step() so far.")
      .def_property_readonly("evaluations", &Lbfgs::evaluations,
                             "Closure calls over every step() so far.");

  m.def(
      "_identity",
      [](const EagerTensor& t) { return reinterpret_cast<std::uintptr_t>(t.impl().get()); },
      "An id of the tensor itself (Python objects on one tensor share it).");
}

}  // namespace tenferro::python
