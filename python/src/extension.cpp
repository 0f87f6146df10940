// Extension families written in Python (tenferro.Family): the seed's subject
// from Python. A family is an extension op whose CPU engine calls the Python
// forward; its AD rules (carried by the op, RuleCarryingOp) emit two more
// extension ops of the same module, <op>_jvp and <op>_vjp, whose engines call
// the Python jvp and vjp. The family installs itself on first use through
// the eager install-ensure path (apply_eager_with_module_factory), works in
// traced programs (extension::apply), and reports the library's errors.
//
// Defining a family again under the same id (a notebook cell run twice) is
// fine: ops compare by definition, the engines call whichever definition
// their op carries, and the rules travel with the op.
//
// The GIL: every call into the runtime releases it; the engines and the
// shape rule take it back to call Python. Python objects held by C++ objects
// are released under the GIL (PyRef).

#include "bind.hpp"

namespace tenferro::python {

namespace {

/// A Python object that may be dropped on any thread.
using PyRef = std::shared_ptr<py::object>;
PyRef hold(py::object o) {
  return PyRef(new py::object(std::move(o)), [](py::object* p) {
    if (!Py_IsInitialized()) {
      // The interpreter is gone: leak the reference rather than touch it.
      (void)p->release();
      delete p;
      return;
    }
    py::gil_scoped_acquire gil;
    delete p;
  });
}

enum class Role { Forward, Jvp, Vjp };

struct FamilySpec;

/// One op of a Python family: the forward, or the op a jvp/vjp rule emits.
class PyFamilyOp : public ExtensionOp {
 public:
  PyFamilyOp(std::shared_ptr<const FamilySpec> spec, Role role, std::string params_key,
             PyRef params, std::vector<bool> present);
  const FamilyId& family_id() const override;
  std::size_t input_count() const override;
  std::size_t output_count() const override;
  std::size_t hash() const override { return hash_; }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const PyFamilyOp*>(&other);
    return o != nullptr && o->spec_ == spec_ && o->role_ == role_ &&
           o->params_key_ == params_key_ && o->present_ == present_;
  }
  InferenceResult infer(std::span<const TensorMeta> inputs) const override;
  std::string describe() const override { return std::string(name()) + params_key_; }
  const std::shared_ptr<const FamilySpec>& spec() const { return spec_; }
  Role role() const { return role_; }
  const PyRef& params() const { return params_; }
  const std::vector<bool>& present() const { return present_; }
  const std::string& params_key() const { return params_key_; }

 private:
  std::shared_ptr<const FamilySpec> spec_;
  Role role_;
  std::string params_key_;
  PyRef params_;               // dict of keyword parameters
  std::vector<bool> present_;  // jvp: tangents given; vjp: cotangents given
  std::size_t hash_;
};

struct FamilySpec {
  FamilySpec(FamilyId i, FamilyId j, FamilyId v)
      : id(std::move(i)), jvp_id(std::move(j)), vjp_id(std::move(v)) {}
  FamilyId id, jvp_id, vjp_id;
  std::size_t n_in = 1, n_out = 1;
  PyRef forward, shape_rule, jvp, vjp;
  bool numpy_io = false;
  ad::RuleSet rules;  // the forward op's rules (PyFamilyOpWithRules)
  ExtensionModulePtr module;
};

FamilyId derived_id(const std::string& id, const char* suffix) {
  FamilyId checked(id);  // InvalidArgument for a malformed id, before slicing it
  (void)checked;
  // <library>.<op>.v<N> -> <library>.<op>_<suffix>.v<N>
  const auto last = id.rfind('.');
  return FamilyId(id.substr(0, last) + "_" + suffix + id.substr(last));
}

PyFamilyOp::PyFamilyOp(std::shared_ptr<const FamilySpec> spec, Role role, std::string params_key,
                       PyRef params, std::vector<bool> present)
    : spec_(std::move(spec)),
      role_(role),
      params_key_(std::move(params_key)),
      params_(std::move(params)),
      present_(std::move(present)) {
  std::size_t h = std::hash<std::string>{}(family_id().str());
  h = hash_combine(h, std::hash<std::string>{}(params_key_));
  for (bool b : present_) h = hash_combine(h, b ? 1 : 2);
  hash_ = h;
}

const FamilyId& PyFamilyOp::family_id() const {
  switch (role_) {
    case Role::Jvp:
      return spec_->jvp_id;
    case Role::Vjp:
      return spec_->vjp_id;
    default:
      return spec_->id;
  }
}

std::size_t count(const std::vector<bool>& v) {
  return static_cast<std::size_t>(std::count(v.begin(), v.end(), true));
}

std::size_t PyFamilyOp::input_count() const {
  switch (role_) {
    case Role::Jvp:  // primals, present tangents
      return spec_->n_in + count(present_);
    case Role::Vjp:  // primals, outputs, present cotangents
      return spec_->n_in + spec_->n_out + count(present_);
    default:
      return spec_->n_in;
  }
}

std::size_t PyFamilyOp::output_count() const {
  return role_ == Role::Vjp ? spec_->n_in : spec_->n_out;
}

/// The forward op of a family with a jvp or vjp rule carries its rules; the
/// other ops carry none, so recording them (a family without rules, second
/// order through a rule op) is UnsupportedAdRule at the call.
class PyFamilyOpWithRules final : public PyFamilyOp, public ad::RuleCarryingOp {
 public:
  using PyFamilyOp::PyFamilyOp;
  const ad::RuleSet& ad_rules() const override;
};

std::shared_ptr<const PyFamilyOp> make_op(std::shared_ptr<const FamilySpec> spec, Role role,
                                          std::string params_key, PyRef params,
                                          std::vector<bool> present) {
  if (spec->jvp || spec->vjp) {
    return std::make_shared<const PyFamilyOpWithRules>(std::move(spec), role, std::move(params_key),
                                                       std::move(params), std::move(present));
  }
  return std::make_shared<const PyFamilyOp>(std::move(spec), role, std::move(params_key),
                                            std::move(params), std::move(present));
}

py::tuple meta_tuple(const TensorMeta& m) {
  return py::make_tuple(py_shape(m.shape), m.dtype);
}

InferenceResult PyFamilyOp::infer(std::span<const TensorMeta> in) const {
  const auto& s = *spec_;
  InferenceResult r;
  if (role_ == Role::Jvp) {
    // Tangents have the outputs' metas: the forward's inference.
    PyFamilyOp fwd(spec_, Role::Forward, params_key_, params_, {});
    return fwd.infer(in.subspan(0, s.n_in));
  }
  if (role_ == Role::Vjp) {
    for (std::size_t i = 0; i < s.n_in; ++i) r.outputs.push_back(in[i]);
    return r;
  }
  if (!s.shape_rule) {
    for (std::size_t j = 0; j < s.n_out; ++j) r.outputs.push_back(in[0]);
    return r;
  }
  py::gil_scoped_acquire gil;
  py::tuple args(in.size());
  for (std::size_t i = 0; i < in.size(); ++i) args[i] = meta_tuple(in[i]);
  py::object out;
  try {
    out = (*s.shape_rule)(*args, **py::reinterpret_borrow<py::dict>(*params_));
  } catch (py::error_already_set& e) {
    const std::string type = py::str(e.type().attr("__name__"));
    const std::string text = py::str(e.value());
    throw Error(ErrorKind::InvalidArgument, std::string(name()),
                "the shape rule raised " + type + ": " + text);
  }
  auto list = py::reinterpret_borrow<py::sequence>(out);
  if (list.size() != s.n_out) {
    throw Error(ErrorKind::ExtensionContract, std::string(name()),
                "the shape rule returned " + std::to_string(list.size()) +
                    " outputs, the family declares " + std::to_string(s.n_out));
  }
  for (auto o : list) {
    auto pair = py::reinterpret_borrow<py::sequence>(o);
    r.outputs.push_back(TensorMeta{dtype_from(pair[1]), cpp_sym_shape(pair[0])});
  }
  return r;
}

/// Tensors as the Python functions see them: untracked tenferro tensors, or
/// NumPy views when the family asked for numpy=True.
py::object to_py(const Tensor& t, bool numpy_io) {
  EagerTensor e = runtime()->tensor(t);
  if (numpy_io) return to_numpy(e);
  return py::cast(e);
}

std::vector<Tensor> from_py_outputs(const py::object& out, std::size_t n, std::string_view family,
                                    std::span<const Tensor> inputs) {
  std::vector<py::object> items;
  if (n == 1 && !py::isinstance<py::tuple>(out) && !py::isinstance<py::list>(out)) {
    items.push_back(out);
  } else {
    for (auto o : py::reinterpret_borrow<py::sequence>(out))
      items.push_back(py::reinterpret_borrow<py::object>(o));
  }
  if (items.size() != n) {
    throw Error(ErrorKind::ExtensionContract, std::string(family),
                "the Python function returned " + std::to_string(items.size()) +
                    " values, the family declares " + std::to_string(n));
  }
  std::vector<Tensor> result;
  for (auto& o : items) {
    if (o.is_none()) {
      result.emplace_back();
      continue;
    }
    Tensor t = as_tensor(o).value();
    // Results own their memory: a result that is (a view of) an input, or a
    // strided view, is copied.
    bool aliases = !t.is_contiguous();
    for (const auto& in : inputs) aliases = aliases || (in.storage() == t.storage());
    result.push_back(aliases ? t.clone() : std::move(t));
  }
  return result;
}

std::vector<Tensor> execute_py(const PyFamilyOp& op, std::span<const Tensor> in) {
  const auto& s = *op.spec();
  py::gil_scoped_acquire gil;
  const py::dict kwargs = py::reinterpret_borrow<py::dict>(*op.params());
  try {
    if (op.role() == Role::Forward) {
      py::tuple args(in.size());
      for (std::size_t i = 0; i < in.size(); ++i) args[i] = to_py(in[i], s.numpy_io);
      return from_py_outputs((*s.forward)(*args, **kwargs), s.n_out, op.name(), in);
    }
    // Rules: primals (and outputs) as tuples, absent (co)tangents as None.
    py::tuple primals(s.n_in);
    for (std::size_t i = 0; i < s.n_in; ++i) primals[i] = to_py(in[i], s.numpy_io);
    std::size_t k = s.n_in;
    if (op.role() == Role::Jvp) {
      py::tuple tangents(s.n_in);
      for (std::size_t i = 0; i < s.n_in; ++i) {
        tangents[i] = op.present()[i] ? to_py(in[k++], s.numpy_io) : py::none();
      }
      auto outs = from_py_outputs((*s.jvp)(primals, tangents, **kwargs), s.n_out, op.name(), in);
      for (auto& o : outs) {
        if (!o.defined()) {
          throw Error(ErrorKind::ExtensionContract, std::string(op.name()),
                      "the jvp rule returned None for an output tangent; return zeros");
        }
      }
      return outs;
    }
    py::tuple outputs(s.n_out);
    for (std::size_t j = 0; j < s.n_out; ++j) outputs[j] = to_py(in[k++], s.numpy_io);
    py::tuple cots(s.n_out);
    for (std::size_t j = 0; j < s.n_out; ++j) {
      cots[j] = op.present()[j] ? to_py(in[k++], s.numpy_io) : py::none();
    }
    auto outs = from_py_outputs((*s.vjp)(primals, outputs, cots, **kwargs), s.n_in, op.name(), in);
    for (std::size_t i = 0; i < outs.size(); ++i) {
      if (!outs[i].defined()) outs[i] = zeros(in[i].shape(), in[i].dtype());
    }
    return outs;
  } catch (py::error_already_set& e) {
    // The Python error's text, under the family's name; a KeyboardInterrupt
    // stays one.
    if (e.matches(PyExc_KeyboardInterrupt)) throw;
    const std::string type = py::str(e.type().attr("__name__"));
    const std::string text = py::str(e.value());
    throw Error(ErrorKind::InvalidArgument, std::string(op.name()),
                "the Python function raised " + type + ": " + text, ErrorPhase::Execute);
  }
}

ad::RuleSet make_rules(const std::shared_ptr<FamilySpec>& spec) {
  ad::RuleSet rs;
  rs.residuals = ad::Residuals::all();
  if (spec->jvp) {
    rs.jvp = [](const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
      const auto& op = static_cast<const PyFamilyOp&>(a.op);
      std::vector<bool> present;
      std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
      bool any = false;
      for (const auto& ti : t) {
        present.push_back(ti.has_value());
        if (ti) {
          ins.push_back(*ti);
          any = true;
        }
      }
      std::vector<ad::MaybeVal> out(op.output_count());
      if (!any) return out;
      auto jop = make_op(op.spec(), Role::Jvp, op.params_key(), op.params(), present);
      auto vals = a.emitter.emit(jop, ins);
      for (std::size_t j = 0; j < vals.size(); ++j) out[j] = vals[j];
      return out;
    };
  }
  if (spec->vjp) {
    rs.vjp = [](const ad::RuleArgs& a, std::span<const ad::MaybeVal> c) {
      const auto& op = static_cast<const PyFamilyOp&>(a.op);
      std::vector<bool> present;
      std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.end());
      ins.insert(ins.end(), a.outputs.begin(), a.outputs.end());
      bool any = false;
      for (const auto& ci : c) {
        present.push_back(ci.has_value());
        if (ci) {
          ins.push_back(*ci);
          any = true;
        }
      }
      std::vector<ad::MaybeVal> out(op.input_count());
      if (!any) return out;
      auto vop = make_op(op.spec(), Role::Vjp, op.params_key(), op.params(), present);
      auto vals = a.emitter.emit(vop, ins);
      for (std::size_t i = 0; i < vals.size(); ++i) out[i] = vals[i];
      return out;
    };
  }
  return rs;
}

[[noreturn]] void second_order(const PyFamilyOp& op) {
  throw Error(ErrorKind::UnsupportedAdRule, std::string(op.name()),
              "second derivatives of the Python family " + op.spec()->id.str() +
                  " are not available: its jvp and vjp rules are Python functions without "
                  "derivatives of their own (first derivatives, in either mode, are)");
}

// The rule ops are linear in their (co)tangent inputs: their derivative there
// is the same op on the new (co)tangents (jvp), or the other rule op (vjp:
// the transpose of J^T is J). A derivative through their primal inputs is a
// second derivative of the family, which raises when it is needed.
std::size_t linear_start(const PyFamilyOp& op) {
  const auto& s = *op.spec();
  return op.role() == Role::Jvp ? s.n_in : s.n_in + s.n_out;
}

std::vector<ad::MaybeVal> rule_op_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  const auto& op = static_cast<const PyFamilyOp&>(a.op);
  const std::size_t lin = linear_start(op);
  for (std::size_t i = 0; i < lin; ++i) {
    if (t[i]) second_order(op);
  }
  std::vector<ad::Val> ins(a.inputs.begin(), a.inputs.begin() + static_cast<std::ptrdiff_t>(lin));
  std::vector<bool> present;
  std::size_t k = lin;
  bool any = false;
  for (bool p : op.present()) {
    if (!p) {
      present.push_back(false);
      continue;
    }
    const auto& d = t[k++];
    present.push_back(d.has_value());
    if (d) {
      ins.push_back(*d);
      any = true;
    }
  }
  std::vector<ad::MaybeVal> out(op.output_count());
  if (!any) return out;
  auto vals =
      a.emitter.emit(make_op(op.spec(), op.role(), op.params_key(), op.params(), present), ins);
  for (std::size_t j = 0; j < vals.size(); ++j) out[j] = vals[j];
  return out;
}

std::vector<ad::MaybeVal> rule_op_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> c) {
  const auto& op = static_cast<const PyFamilyOp&>(a.op);
  const auto& s = *op.spec();
  const std::size_t lin = linear_start(op);
  std::vector<ad::MaybeVal> out(op.input_count());
  bool any = false;
  for (const auto& ci : c) any = any || ci.has_value();
  if (!any) return out;
  for (std::size_t i = 0; i < lin; ++i) {
    if (a.wants(i)) second_order(op);
  }
  // The transpose: J^T for a jvp op, J for a vjp op.
  const Role other = op.role() == Role::Jvp ? Role::Vjp : Role::Jvp;
  if ((other == Role::Vjp && !s.vjp) || (other == Role::Jvp && !s.jvp)) second_order(op);
  std::vector<ad::Val> ins(a.inputs.begin(),
                           a.inputs.begin() + static_cast<std::ptrdiff_t>(s.n_in));
  if (other == Role::Vjp) {
    // The vjp op also reads the primal outputs: recompute them.
    auto fwd = make_op(op.spec(), Role::Forward, op.params_key(), op.params(), {});
    auto outs = a.emitter.emit(fwd, ins);
    ins.insert(ins.end(), outs.begin(), outs.end());
  }
  std::vector<bool> present;
  for (const auto& ci : c) {
    present.push_back(ci.has_value());
    if (ci) ins.push_back(*ci);
  }
  auto vals = a.emitter.emit(make_op(op.spec(), other, op.params_key(), op.params(), present), ins);
  // vals holds one value per position of the transposed op's outputs, which
  // are this op's linear positions; keep those that this op received.
  std::size_t k = lin;
  for (std::size_t p = 0; p < op.present().size(); ++p) {
    if (op.present()[p]) out[k++] = vals[p];
  }
  return out;
}

const ad::RuleSet& rule_op_rules() {
  static const ad::RuleSet rs = [] {
    ad::RuleSet r;
    r.residuals = ad::Residuals::all();
    r.jvp = &rule_op_jvp;
    r.vjp = &rule_op_vjp;
    return r;
  }();
  return rs;
}

const ad::RuleSet& PyFamilyOpWithRules::ad_rules() const {
  return role() == Role::Forward ? spec()->rules : rule_op_rules();
}

ExtensionModulePtr make_module(const std::shared_ptr<FamilySpec>& spec) {
  auto module = std::make_shared<SimpleModule>("python." + spec->id.str());
  auto exec = [](const PyFamilyOp& op, ExecutionScope&, ExtensionCaches&,
                 std::span<const Tensor> in) { return execute_py(op, in); };
  module->family<PyFamilyOp>(spec->id.str(), exec);
  if (spec->jvp) module->family<PyFamilyOp>(spec->jvp_id.str(), exec);
  if (spec->vjp) module->family<PyFamilyOp>(spec->vjp_id.str(), exec);
  return module;
}

/// The Python-facing family object.
struct PyFamily {
  std::shared_ptr<FamilySpec> spec;
};

std::string params_key(const py::dict& params) {
  if (params.empty()) return "";
  py::list items = py::module_::import("builtins").attr("sorted")(params.attr("items")());
  return std::string(py::str(py::repr(items)));
}

py::object apply_family(const PyFamily& f, const py::args& args, const py::kwargs& kwargs) {
  const auto& s = *f.spec;
  if (args.size() != s.n_in) {
    throw Error(ErrorKind::InvalidArgument, s.id.str(),
                "takes " + std::to_string(s.n_in) + " tensor inputs, " +
                    std::to_string(args.size()) + " were given");
  }
  py::dict params = kwargs ? py::dict(kwargs) : py::dict();
  ExtensionOpPtr op = make_op(f.spec, Role::Forward, params_key(params), hold(params), {});
  return apply_extension(op, s.module, args);
}

}  // namespace

py::object apply_extension(const ExtensionOpPtr& op, const ExtensionModulePtr& module,
                           const py::args& args) {
  if (args.size() != op->input_count()) {
    throw Error(ErrorKind::InvalidArgument, std::string(op->name()),
                "takes " + std::to_string(op->input_count()) + " tensor inputs, " +
                    std::to_string(args.size()) + " were given");
  }
  bool traced = false;
  for (auto a : args) traced = traced || is_traced(a);
  auto pack = [&](auto outs) -> py::object {
    if (outs.size() == 1) return py::cast(outs[0]);
    return py::tuple(py::cast(outs));
  };
  if (traced) {
    // The program runs on the default runtime: the module must be there
    // (ensured with the rules it carries, which the traced transforms use).
    const auto& rt = runtime();
    rt->ensure_module(module, op->name(), eager_extension_target(*rt).engine);
    std::vector<TracedTensor> ins;
    for (auto a : args) ins.push_back(to<TracedTensor>(a));
    return pack(extension::apply(op, ins));
  }
  std::vector<EagerTensor> ins;
  for (auto a : args) ins.push_back(as_tensor(a));
  std::vector<EagerTensor> outs;
  {
    py::gil_scoped_release r;
    outs = apply_eager_with_module_factory(
        op, ins, [module](const EagerExtensionTarget&) { return module; });
  }
  return pack(outs);
}

void init_extension(py::module_& m) {
  py::class_<PyFamily>(m, "Family", R"doc(
An extension family written in Python (docs/python.md, "Extension families").

    square = tenferro.Family("mylib.square.v1", forward=lambda x: x * x,
                             jvp=lambda p, t: (2 * p[0] * t[0],),
                             vjp=lambda p, out, ct: (2 * p[0] * ct[0],))
    y = square(x)           # eager: installs itself on first use, records for AD
    tenferro.jit(lambda x: square(x).sum(), Spec(("n",)))   # traced

forward(*inputs, **params) computes the outputs; shape(*metas, **params),
where each meta is (shape, dtype), returns [(shape, dtype)] per output
(default: every output like input 0); jvp(primals, tangents, **params) and
vjp(primals, outputs, cotangents, **params) get tuples (absent tangents and
cotangents are None) and return one value per output / input. With
numpy=True the functions see NumPy arrays instead of tensors. Derivatives
of the rules themselves are not available (second order raises
UnsupportedAdRule naming <op>_jvp / <op>_vjp).)doc")
      .def(py::init([](const std::string& id, const py::object& forward, const py::object& shape,
                       const py::object& jvp, const py::object& vjp, std::size_t inputs,
                       std::size_t outputs, bool numpy_io) {
             if (forward.is_none() || !PyCallable_Check(forward.ptr())) {
               throw Error(ErrorKind::InvalidArgument, "Family", "forward must be a callable");
             }
             if (inputs == 0 || outputs == 0) {
               throw Error(ErrorKind::InvalidArgument, "Family",
                           "a family takes at least one input and gives at least one output");
             }
             // FamilyId validates the grammar (InvalidArgument).
             auto spec = std::make_shared<FamilySpec>(FamilyId(id), derived_id(id, "jvp"),
                                                      derived_id(id, "vjp"));
             spec->n_in = inputs;
             spec->n_out = outputs;
             spec->forward = hold(forward);
             if (!shape.is_none()) spec->shape_rule = hold(shape);
             if (!jvp.is_none()) spec->jvp = hold(jvp);
             if (!vjp.is_none()) spec->vjp = hold(vjp);
             spec->numpy_io = numpy_io;
             spec->rules = make_rules(spec);
             spec->module = make_module(spec);
             return PyFamily{spec};
           }),
           py::arg("id"), py::kw_only(), py::arg("forward"), py::arg("shape") = py::none(),
           py::arg("jvp") = py::none(), py::arg("vjp") = py::none(), py::arg("inputs") = 1,
           py::arg("outputs") = 1, py::arg("numpy") = false)
      .def("__call__", &apply_family,
           "Applies the family (eager or traced); keyword arguments "
           "are its parameters (part of the op's identity).")
      .def_property_readonly("id", [](const PyFamily& f) { return f.spec->id.str(); })
      .def("__repr__", [](const PyFamily& f) { return "Family('" + f.spec->id.str() + "')"; });
}

}  // namespace tenferro::python
