#pragma once
// The machinery of the bad-input table (tests/ad/bad_input_test.cpp): a row
// is one call written once as a generic lambda over a tier; it runs in the
// direct tier (Tensor with a CpuBackend), the eager tier (EagerTensor) and
// the traced tier (TracedTensor built, compiled, prepared and run), and every
// tier must give the row's outcome: the same ErrorKind with a message naming
// the op, or a result of the expected shape, dtype and values. After each
// call the tier must still work and the row's inputs must be unchanged.

#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <tuple>
#include <type_traits>
#include <utility>
#include <vector>

#include "tenferro/tenferro.hpp"

namespace badinput {

using namespace tenferro;
namespace tf = tenferro;
using V = std::vector<std::int64_t>;

enum class Cat {
  DType,
  Rank,
  Shape,
  Axis,
  Extent,
  EmptyOrScalar,
  Undefined,
  Foreign,
  NonFinite,
  Param,
  Io,
  Program,
  Factory,
  InPlace,
};
inline const char* cat_name(Cat c) {
  switch (c) {
    case Cat::DType:
      return "dtype";
    case Cat::Rank:
      return "rank";
    case Cat::Shape:
      return "shape";
    case Cat::Axis:
      return "axis";
    case Cat::Extent:
      return "extent";
    case Cat::EmptyOrScalar:
      return "zero-size/rank-0";
    case Cat::Undefined:
      return "undefined";
    case Cat::Foreign:
      return "other runtime";
    case Cat::NonFinite:
      return "nan/inf";
    case Cat::Param:
      return "parameter";
    case Cat::Io:
      return "io";
    case Cat::Program:
      return "program";
    case Cat::Factory:
      return "factory";
    case Cat::InPlace:
      return "in-place";
  }
  return "?";
}

inline constexpr const char* kTierNames[3] = {"direct", "eager", "traced"};

/// Thrown by a tier that does not have the op (or the form) a row calls.
struct NotInTier {};

/// What a row expects: an error kind, or a result of this shape (and dtype,
/// and values of output 0 when given).
struct Expect {
  std::optional<ErrorKind> kind;
  Shape shape;
  std::optional<DType> dtype;
  std::vector<double> values;
};
inline Expect err(ErrorKind k) {
  return Expect{k, {}, std::nullopt, {}};
}
inline Expect ok(Shape shape, std::optional<DType> dtype = std::nullopt,
                 std::vector<double> values = {}) {
  return Expect{std::nullopt, std::move(shape), dtype, std::move(values)};
}

struct Env {
  std::shared_ptr<CpuBackend> cpu =
      std::make_shared<CpuBackend>(CpuBackendOptions{.num_threads = 2});
  EagerRuntimePtr eager = EagerRuntime::make_cpu({.num_threads = 2});
  EagerRuntimePtr other = EagerRuntime::make_cpu({.num_threads = 1});
};

struct DirectTier {
  Env* env;
  static constexpr const char* kName = "direct";
  using TT = Tensor;
  Tensor in(const Tensor& x) { return x; }
  Tensor undef() const { return Tensor(); }
  Tensor foreign(const Tensor&) const { throw NotInTier{}; }
  CpuBackend& backend() const { return *env->cpu; }
  /// f(args..., backend) when the direct tier has that form.
  template <class F, class... A>
  decltype(auto) call(F f, A&&... a) const {
    if constexpr (std::is_invocable_v<F, A..., CpuBackend&>) {
      return f(std::forward<A>(a)..., *env->cpu);
    } else {
      throw NotInTier{};
    }
  }
};

struct EagerTier {
  Env* env;
  static constexpr const char* kName = "eager";
  using TT = EagerTensor;
  EagerTensor in(const Tensor& x) { return env->eager->tensor(x); }
  EagerTensor undef() const { return EagerTensor(); }
  EagerTensor foreign(const EagerTensor& x) const { return env->other->tensor(x.value()); }
  template <class F, class... A>
  decltype(auto) call(F f, A&&... a) const {
    if constexpr (std::is_invocable_v<F, A...>) {
      return f(std::forward<A>(a)...);
    } else {
      throw NotInTier{};
    }
  }
};

struct TracedTier {
  Env* env;
  static constexpr const char* kName = "traced";
  using TT = TracedTensor;
  std::vector<TracedTensor> placeholders;
  std::vector<Tensor> values;
  TracedTensor in(const Tensor& x) {
    placeholders.push_back(placeholder(x.dtype(), to_sym_shape(x.shape().span())));
    values.push_back(x);
    return placeholders.back();
  }
  TracedTensor undef() const { return TracedTensor(); }
  TracedTensor foreign(const TracedTensor&) const { throw NotInTier{}; }
  template <class F, class... A>
  decltype(auto) call(F f, A&&... a) const {
    if constexpr (std::is_invocable_v<F, A...>) {
      return f(std::forward<A>(a)...);
    } else {
      throw NotInTier{};
    }
  }
};

template <class>
inline constexpr bool kAlwaysFalse = false;

/// Every tensor of an op's result (a tensor, a pair or tuple, a vector, or
/// one of linalg's result structs), in order.
template <class TT, class R>
void collect(std::vector<TT>& out, const R& r) {
  if constexpr (std::is_same_v<R, TT>) {
    out.push_back(r);
  } else if constexpr (requires { std::tuple_size<R>::value; }) {
    std::apply([&](const auto&... e) { (collect(out, e), ...); }, r);
  } else if constexpr (std::is_same_v<R, std::vector<TT>>) {
    for (const auto& e : r) collect(out, e);
  } else if constexpr (requires { r.U, r.S, r.Vh; }) {
    collect(out, std::tie(r.U, r.S, r.Vh));
  } else if constexpr (requires { r.eigenvalues, r.eigenvectors; }) {
    collect(out, std::tie(r.eigenvalues, r.eigenvectors));
  } else if constexpr (requires { r.solution, r.residuals; }) {
    collect(out, std::tie(r.solution, r.residuals, r.rank, r.singular_values));
  } else {
    static_assert(kAlwaysFalse<R>, "a row returns something collect() does not know");
  }
}

/// What one tier did with a row.
struct Outcome {
  enum State { Value, TypedError, Skipped, OtherException } state = Skipped;
  ErrorKind kind = ErrorKind::Internal;
  std::string what;
  std::vector<Tensor> outputs;
};

template <class Tier, class F>
Outcome run_in(Tier& tier, const F& f, const std::vector<Tensor>& inputs) {
  Outcome o;
  try {
    std::vector<typename Tier::TT> xs;
    for (const Tensor& x : inputs) xs.push_back(tier.in(x));
    std::vector<typename Tier::TT> outs;
    if constexpr (std::is_void_v<decltype(f(tier, xs))>) {
      f(tier, xs);
    } else {
      collect(outs, f(tier, xs));
    }
    if constexpr (std::is_same_v<Tier, DirectTier>) {
      o.outputs = outs;
    } else if constexpr (std::is_same_v<Tier, EagerTier>) {
      for (const auto& e : outs) o.outputs.push_back(e.value());
    } else {
      Runtime& rt = *tier.env->eager->runtime();
      const Program p = compile(outs, tier.placeholders);
      const PreparedProgram pp = prepare(rt, p, InputSignature::of(tier.values));
      o.outputs = run(rt, pp, tier.values);
    }
    o.state = Outcome::Value;
  } catch (const NotInTier&) {
    o.state = Outcome::Skipped;
  } catch (const Error& e) {
    o.state = Outcome::TypedError;
    o.kind = e.kind();
    o.what = e.what();
  } catch (const std::exception& e) {
    o.state = Outcome::OtherException;
    o.what = e.what();
  } catch (...) {
    o.state = Outcome::OtherException;
    o.what = "a non-standard exception";
  }
  return o;
}

struct Row {
  std::string name;
  Cat cat;
  Expect expect;
  std::vector<Tensor> inputs;
  std::string op;  // the name the error message must contain
  std::function<Outcome(Env&, const std::vector<Tensor>&)> tiers[3];
};

template <class F>
Row make_row(std::string name, Cat cat, Expect expect, std::vector<Tensor> inputs, F f,
             std::string op = {}) {
  if (op.empty()) op = name.substr(0, name.find('/'));
  Row r{std::move(name), cat, std::move(expect), std::move(inputs), std::move(op), {}};
  r.tiers[0] = [f](Env& env, const std::vector<Tensor>& in) {
    DirectTier t{&env};
    return run_in(t, f, in);
  };
  r.tiers[1] = [f](Env& env, const std::vector<Tensor>& in) {
    EagerTier t{&env};
    return run_in(t, f, in);
  };
  r.tiers[2] = [f](Env& env, const std::vector<Tensor>& in) {
    TracedTier t{&env, {}, {}};
    return run_in(t, f, in);
  };
  return r;
}

/// A row for one call outside the tiers (factories, io, optimisers, programs):
/// it runs once, as the "direct" tier.
inline Row single_row(std::string name, Cat cat, ErrorKind kind, std::function<void(Env&)> f,
                      std::string op = {}) {
  if (op.empty()) op = name.substr(0, name.find('/'));
  Row r{std::move(name), cat, err(kind), {}, std::move(op), {}};
  r.tiers[0] = [f](Env& env, const std::vector<Tensor>&) {
    Outcome o;
    try {
      f(env);
      o.state = Outcome::Value;
    } catch (const Error& e) {
      o.state = Outcome::TypedError;
      o.kind = e.kind();
      o.what = e.what();
    } catch (const std::exception& e) {
      o.state = Outcome::OtherException;
      o.what = e.what();
    }
    return o;
  };
  return r;
}

/// The bytes of a tensor's elements (in column-major order).
inline std::vector<unsigned char> bytes_of(const Tensor& x) {
  if (!x.defined() || x.numel() == 0) return {};
  const Tensor c = x.contiguous();
  const auto* p = static_cast<const unsigned char*>(c.raw_data());
  return {p, p + x.numel() * static_cast<std::int64_t>(itemsize(x.dtype()))};
}

/// One small op in each tier, with its value: the runtime still works.
bool tier_still_works(Env& env, int tier);

/// Runs every row in every tier; reports each disagreement as a test failure
/// and returns the number of rows per category.
std::map<std::string, int> run_rows(Env& env, const std::vector<Row>& rows);

}  // namespace badinput

// Lifts an overload set (direct and AD forms) into one callable.
#define OP(f)                                                       \
  [](auto&&... a) -> decltype(f(std::forward<decltype(a)>(a)...)) { \
    return f(std::forward<decltype(a)>(a)...);                      \
  }
// A row body: `t` is the tier, `x` the row's inputs in that tier.
#define L(...) [](auto& t, [[maybe_unused]] const auto& x) { return __VA_ARGS__; }
// A call of `f` with the tier's calling convention.
#define C(f, ...) t.call(OP(f), __VA_ARGS__)
