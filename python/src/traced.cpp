// The traced tier from Python: tenferro.jit(fn, *specs) builds a program
// from a Python function of TracedTensors, with named sizes bound when it
// runs; programs are transformed (grad, vjp, jvp, hvp), prepared once and
// run many times.

#include "bind.hpp"

namespace tenferro::python {

namespace {

/// A compiled program and how its outputs go back to Python.
struct PyProgram {
  Program program;
  /// The traced function returned one tensor (not a tuple).
  bool single = false;
};

struct PyPrepared {
  PreparedProgram prepared;
  bool single = false;
  DimBindings last_bindings;
};

py::object outputs_to_py(std::vector<Tensor> outs, bool single) {
  if (single && outs.size() == 1) return py::cast(runtime()->tensor(std::move(outs[0])));
  py::tuple t(outs.size());
  for (std::size_t i = 0; i < outs.size(); ++i)
    t[i] = py::cast(runtime()->tensor(std::move(outs[i])));
  return t;
}

std::vector<Tensor> inputs_of(const py::args& args, const Program& p) {
  if (args.size() != p.input_count()) {
    throw Error(ErrorKind::InvalidArgument, "run",
                "the program takes " + std::to_string(p.input_count()) + " inputs, " +
                    std::to_string(args.size()) + " were given");
  }
  std::vector<Tensor> in;
  in.reserve(args.size());
  for (std::size_t i = 0; i < args.size(); ++i) {
    const TensorMeta& meta = p.input_meta(i);
    EagerTensor t = as_tensor(args[i]);
    if (t.dtype() != meta.dtype && is_py_scalar(args[i])) t = as_tensor(args[i], meta.dtype);
    in.push_back(t.value());
  }
  return in;
}

std::vector<TracedTensor> traced_outputs(const py::object& out) {
  std::vector<TracedTensor> outs;
  if (is_traced(out)) {
    outs.push_back(out.cast<TracedTensor>());
    return outs;
  }
  if (py::isinstance<py::tuple>(out) || py::isinstance<py::list>(out)) {
    for (auto o : py::reinterpret_borrow<py::sequence>(out)) {
      if (!is_traced(o)) {
        throw Error(ErrorKind::InvalidArgument, "trace",
                    "the traced function must return traced values (a TracedTensor or a tuple "
                    "of them); got " +
                        std::string(py::str(py::type::of(o).attr("__name__"))) +
                        " (a value that does not depend on the inputs: return tenferro."
                        "zeros_like(x) + value)");
      }
      outs.push_back(o.cast<TracedTensor>());
    }
    return outs;
  }
  throw Error(ErrorKind::InvalidArgument, "trace",
              "the traced function must return a TracedTensor or a tuple of them, got " +
                  std::string(py::str(py::type::of(out).attr("__name__"))));
}

PyProgram trace_py(const py::function& fn, const py::args& specs) {
  std::vector<TracedTensor> inputs;
  py::tuple args(specs.size());
  for (std::size_t i = 0; i < specs.size(); ++i) {
    py::handle spec = specs[i];
    const DType dt = dtype_from(spec.attr("dtype"));
    SymShape shape = cpp_sym_shape(spec.attr("shape"));
    py::object name = spec.attr("name");
    std::string label = name.is_none() ? "x" + std::to_string(i) : name.cast<std::string>();
    inputs.push_back(placeholder(dt, std::move(shape), std::move(label)));
    args[i] = py::cast(inputs.back());
  }
  py::object out = fn(*args);
  const bool single = is_traced(out);
  auto outs = traced_outputs(out);
  return PyProgram{compile(outs, inputs), single};
}

py::dict bindings_dict(const DimBindings& b) {
  py::dict d;
  for (const auto& [name, value] : b) d[py::str(name)] = value;
  return d;
}

}  // namespace

void init_traced(py::module_& m) {
  py::class_<PyProgram>(m, "Program", R"doc(
A compiled traced program (tenferro.jit). Call it with tensors to run it:
it is prepared for the inputs' dtypes and ranks once (cached in the runtime)
and its named sizes bind on every call. Transform it with grad(), vjp(),
jvp() and hvp(); prepare() gives a plan to run without the cache lookup.)doc")
      .def(
          "__call__",
          [](const PyProgram& p, const py::args& args) {
            auto in = inputs_of(args, p.program);
            std::vector<Tensor> outs;
            {
              py::gil_scoped_release r;
              outs = run_compiled(*runtime()->runtime(), p.program, in);
            }
            return outputs_to_py(std::move(outs), p.single);
          },
          "Runs the program on tensors (or arrays): one output, or a tuple.")
      .def(
          "prepare",
          [](const PyProgram& p, const py::args& args) {
            auto in = inputs_of(args, p.program);
            PreparedProgram prep;
            {
              py::gil_scoped_release r;
              prep = prepare(*runtime()->runtime(), p.program, InputSignature::of(in));
            }
            return PyPrepared{prep, p.single, {}};
          },
          "A plan prepared once for inputs like these (dtypes, ranks, constant extents); "
          "named sizes still bind on every run.")
      .def(
          "grad",
          [](const PyProgram& p, const py::object& wrt) {
            std::vector<std::size_t> w;
            if (py::isinstance<py::int_>(wrt)) {
              w.push_back(wrt.cast<std::size_t>());
            } else if (!wrt.is_none()) {
              for (auto i : py::reinterpret_borrow<py::iterable>(wrt))
                w.push_back(i.cast<std::size_t>());
            }
            const bool single = w.size() == 1 || (w.empty() && p.program.input_count() == 1);
            return PyProgram{grad(p.program, w, runtime()->ad()), single};
          },
          py::arg("wrt") = py::none(),
          "The gradient program of output 0 (a real scalar): same inputs, one gradient per "
          "input in wrt (an index or a list; all inputs when None).")
      .def(
          "vjp",
          [](const PyProgram& p) {
            return PyProgram{vjp(p.program, runtime()->ad()), false};
          },
          "Inputs (inputs..., one cotangent per output); outputs (outputs..., one cotangent "
          "per input).")
      .def(
          "jvp",
          [](const PyProgram& p) {
            return PyProgram{jvp(p.program, runtime()->ad()), false};
          },
          "Inputs (inputs..., one tangent per input); outputs (outputs..., one tangent per "
          "output).")
      .def(
          "hvp",
          [](const PyProgram& p) {
            return PyProgram{hvp(p.program, HvpMode::ForwardOverReverse, runtime()->ad()),
                             p.program.input_count() == 1};
          },
          "Hessian-vector products of output 0: inputs (inputs..., one direction per input), "
          "outputs H v per input.")
      .def_property_readonly("input_count",
                             [](const PyProgram& p) { return p.program.input_count(); })
      .def_property_readonly("output_count",
                             [](const PyProgram& p) { return p.program.output_count(); })
      .def_property_readonly("node_count",
                             [](const PyProgram& p) { return p.program.node_count(); })
      .def(
          "count_ops",
          [](const PyProgram& p, const std::string& name) { return p.program.count_ops(name); },
          py::arg("name"), "Nodes of the op named name ('add', 'dot_general', a family id).")
      .def_property_readonly("fingerprint",
                             [](const PyProgram& p) { return p.program.fingerprint(); })
      .def("__str__", [](const PyProgram& p) { return p.program.to_string(); })
      .def("__repr__", [](const PyProgram& p) {
        return "Program(inputs=" + std::to_string(p.program.input_count()) +
               ", outputs=" + std::to_string(p.program.output_count()) +
               ", nodes=" + std::to_string(p.program.node_count()) + ")";
      });

  py::class_<PyPrepared>(
      m, "PreparedProgram",
      "A program prepared for a runtime and an input signature (Program.prepare).")
      .def(
          "__call__",
          [](PyPrepared& p, const py::args& args) {
            auto in = inputs_of(args, p.prepared.program());
            std::vector<Tensor> outs;
            RunStats stats;
            {
              py::gil_scoped_release r;
              outs = run(*runtime()->runtime(), p.prepared, in, &stats);
            }
            p.last_bindings = stats.bindings;
            return outputs_to_py(std::move(outs), p.single);
          },
          "Runs the plan (no preparation); named sizes bind from these inputs.")
      .def_property_readonly(
          "bindings", [](const PyPrepared& p) { return bindings_dict(p.last_bindings); },
          "The named sizes of the last run.")
      .def_property_readonly("step_count",
                             [](const PyPrepared& p) { return p.prepared.step_count(); })
      .def_property_readonly("fused_group_count",
                             [](const PyPrepared& p) { return p.prepared.fused_group_count(); });

  m.def("_trace", &trace_py, py::arg("fn"));
  m.def(
      "checkpoint",
      [](const py::function& fn, const py::args& xs) -> py::object {
        std::vector<TracedTensor> ins;
        for (auto x : xs) ins.push_back(to<TracedTensor>(x));
        bool single = false;
        auto outs = checkpoint(
            [&](std::span<const TracedTensor> a) {
              py::tuple args(a.size());
              for (std::size_t i = 0; i < a.size(); ++i) args[i] = py::cast(a[i]);
              py::object out = fn(*args);
              single = is_traced(out);
              return traced_outputs(out);
            },
            ins);
        if (single && outs.size() == 1) return py::cast(outs[0]);
        return py::cast(outs);
      },
      py::arg("fn"),
      "Inside tenferro.jit: runs fn(*xs) as a checkpoint region (reverse mode recomputes "
      "its intermediates instead of storing them).");
  m.def(
      "placeholder",
      [](const py::object& shape, const py::object& dtype, const std::string& name) {
        return placeholder(dtype_from(dtype), cpp_sym_shape(shape), name);
      },
      py::arg("shape"), py::arg("dtype") = py::str("float64"), py::arg("name") = "");
}

}  // namespace tenferro::python
