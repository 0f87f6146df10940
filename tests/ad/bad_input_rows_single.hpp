#pragma once
// Rows outside the op tiers: factories, .npy files, optimiser options,
// programs (undefined, wrong inputs at run, bind_dimensions), and in-place
// forms (whose target must be unchanged after the error).

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <limits>
#include <string>
#include <vector>

#include "ad/bad_input_rows_core.hpp"
#include "tenferro/io/npy.hpp"

namespace badinput {

inline std::filesystem::path temp_file(const std::string& name, const std::string& contents) {
  const auto path = std::filesystem::temp_directory_path() /
                    ("tenferro_bad_input_" + std::to_string(::getpid()) + "_" + name);
  std::ofstream(path, std::ios::binary) << contents;
  return path;
}

inline std::string npy_header(const std::string& dict) {
  std::string h = dict;
  while ((10 + h.size() + 1) % 64 != 0) h += ' ';
  h += '\n';
  std::string out = "\x93NUMPY";
  out += '\x01';
  out += '\x00';
  out += static_cast<char>(h.size() & 0xff);
  out += static_cast<char>(h.size() >> 8);
  return out + h;
}

inline void add_factory_rows(std::vector<Row>& rows) {
  auto row = [&](std::string n, ErrorKind k, std::function<void(Env&)> f) {
    rows.push_back(single_row(std::move(n), Cat::Factory, k, std::move(f)));
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const double inf = std::numeric_limits<double>::infinity();
  row("zeros/negative", K::InvalidArgument, [](Env&) { (void)zeros(V{-1, 2}); });
  row("zeros/overflowing", K::InvalidArgument, [](Env&) { (void)zeros(V{kHuge, kHuge}); });
  row("ones/huge", K::InvalidArgument, [](Env&) { (void)ones(V{kHuge}); });
  row("full/negative", K::InvalidArgument, [](Env&) { (void)full(V{2, -3}, Scalar(1.0), f64); });
  row("full/complex-into-real", K::DTypeMismatch,
      [](Env&) { (void)full(V{2}, Scalar(c128_t(1, 1)), f64); });
  row("arange/zero-step", K::InvalidArgument, [](Env&) { (void)arange(0.0, 1.0, 0.0); });
  row("arange/negative-n", K::InvalidArgument, [](Env&) { (void)arange(std::int64_t{-3}); });
  row("arange/huge", K::InvalidArgument, [](Env&) { (void)arange(kHuge); });
  row("arange/nan-stop", K::InvalidArgument, [nan](Env&) { (void)arange(0.0, nan, 1.0); });
  row("arange/inf-stop", K::InvalidArgument, [inf](Env&) { (void)arange(0.0, inf, 1.0); });
  row("arange/nan-step", K::InvalidArgument, [nan](Env&) { (void)arange(0.0, 5.0, nan); });
  row("linspace/negative-num", K::InvalidArgument, [](Env&) { (void)linspace(0.0, 1.0, -2); });
  row("linspace/huge", K::InvalidArgument, [](Env&) { (void)linspace(0.0, 1.0, kHuge); });
  row("eye/negative", K::InvalidArgument, [](Env&) { (void)eye(-2); });
  row("eye/huge", K::InvalidArgument, [](Env&) { (void)eye(std::int64_t{1} << 31); });
  row("eye/negative-n", K::InvalidArgument, [](Env&) { (void)eye(-1, 3, bool_); });
  row("randn/integer", K::DTypeMismatch, [](Env&) {
    Generator g(1);
    (void)randn(V{2}, i64, g);
  });
  row("full/traced-negative", K::InvalidArgument,
      [](Env&) { (void)traced_full(SymShape{SymDim(-2)}, Scalar(1.0), f64); });
  row("full/traced-overflowing", K::InvalidArgument, [](Env&) {
    (void)traced_full(SymShape{SymDim(kHuge), SymDim(kHuge)}, Scalar(1.0), f64);
  });
  row("placeholder/negative", K::InvalidArgument,
      [](Env&) { (void)placeholder(f64, SymShape{SymDim(-1)}); });
  row("placeholder/overflowing", K::InvalidArgument, [](Env&) {
    (void)placeholder(f64, SymShape{SymDim(kHuge), SymDim(kHuge)});
  });
  row("from_col_major/size-mismatch", K::ShapeMismatch, [](Env&) {
    (void)Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 3});
  });
  row("from_row_major/negative", K::InvalidArgument,
      [](Env&) { (void)Tensor::from_row_major({-1}, std::vector<double>{}); });
}

inline void add_io_rows(std::vector<Row>& rows) {
  auto row = [&](std::string n, ErrorKind k, std::function<void(Env&)> f, std::string op = "npy") {
    rows.push_back(single_row(std::move(n), Cat::Io, k, std::move(f), std::move(op)));
  };
  auto load_bytes = [](const std::string& s) {
    const auto* p = reinterpret_cast<const std::byte*>(s.data());
    (void)io::from_npy_bytes(std::span<const std::byte>(p, s.size()));
  };
  row("npy/empty", K::InvalidArgument, [load_bytes](Env&) { load_bytes(""); });
  row("npy/bad-magic", K::InvalidArgument, [load_bytes](Env&) { load_bytes("NOT A NUMPY FILE"); });
  row("npy/truncated-header", K::InvalidArgument, [load_bytes](Env&) {
    load_bytes(
        npy_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }").substr(0, 20));
  });
  row("npy/short-data", K::InvalidArgument, [load_bytes](Env&) {
    load_bytes(npy_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2,), }") + "1234");
  });
  row("npy/huge-shape", K::InvalidArgument, [load_bytes](Env&) {
    load_bytes(
        npy_header("{'descr': '<f8', 'fortran_order': True, 'shape': (2305843009213693952, 8), }"));
  });
  row("npy/negative-shape", K::InvalidArgument, [load_bytes](Env&) {
    load_bytes(npy_header("{'descr': '<f8', 'fortran_order': True, 'shape': (-2,), }"));
  });
  row("npy/unknown-dtype", K::Unsupported, [load_bytes](Env&) {
    load_bytes(npy_header("{'descr': '<U4', 'fortran_order': True, 'shape': (1,), }") +
               "abcdabcdabcdabcd");
  });
  row("npy/garbage-dict", K::InvalidArgument,
      [load_bytes](Env&) { load_bytes(npy_header("{'descr': <f8 shape: }")); });
  row("npy/missing-file", K::InvalidArgument,
      [](Env&) { (void)io::load_npy("/nonexistent/tenferro/bad_input.npy"); });
  row("npy/directory", K::InvalidArgument,
      [](Env&) { (void)io::load_npy(std::filesystem::temp_directory_path()); });
  row("npy/garbage-file", K::InvalidArgument, [](Env&) {
    const auto p = temp_file("garbage.npy", "garbage");
    struct Remove {
      std::filesystem::path p;
      ~Remove() { std::filesystem::remove(p); }
    } remove{p};
    (void)io::load_npy(p);
  });
  row("npy/save-undefined", K::InvalidArgument, [](Env&) { (void)io::to_npy_bytes(Tensor()); });
  row(
      "npz/missing-file", K::InvalidArgument,
      [](Env&) { (void)io::load_npz("/nonexistent/tenferro/bad_input.npz"); }, "npz");
  row(
      "npz/garbage-file", K::InvalidArgument,
      [](Env&) {
        const auto p = temp_file("garbage.npz", "PK\x03\x04 not really a zip");
        struct Remove {
          std::filesystem::path p;
          ~Remove() { std::filesystem::remove(p); }
        } remove{p};
        (void)io::load_npz(p);
      },
      "npz");
}

inline void add_optim_rows(std::vector<Row>& rows) {
  auto row = [&](std::string n, ErrorKind k, std::function<void(Env&)> f,
                 std::string op = "optim") {
    rows.push_back(single_row(std::move(n), Cat::Param, k, std::move(f), std::move(op)));
  };
  const double nan = std::numeric_limits<double>::quiet_NaN();
  auto param = [](Env& env) { return env.eager->variable(ones({2})); };
  row("sgd/negative-lr", K::InvalidArgument,
      [param](Env& e) { optim::Sgd({param(e)}, {.lr = -1.0}); });
  row("sgd/nan-lr", K::InvalidArgument,
      [param, nan](Env& e) { optim::Sgd({param(e)}, {.lr = nan}); });
  row("sgd/negative-momentum", K::InvalidArgument,
      [param](Env& e) { optim::Sgd({param(e)}, {.lr = 0.1, .momentum = -0.5}); });
  row("sgd/negative-weight-decay", K::InvalidArgument,
      [param](Env& e) { optim::Sgd({param(e)}, {.lr = 0.1, .weight_decay = -1.0}); });
  row("sgd/no-params", K::InvalidArgument, [](Env&) { optim::Sgd({}, {}); });
  row(
      "sgd/integer-param", K::DTypeMismatch,
      [](Env& e) { optim::Sgd({e.eager->variable(filled({2}, i64))}, {}); }, "requires_grad_");
  row("sgd/undefined-param", K::InvalidArgument, [](Env&) { optim::Sgd({EagerTensor()}, {}); });
  row("sgd/not-a-leaf", K::RuntimeState, [param](Env& e) {
    const EagerTensor p = param(e);
    optim::Sgd({p * 2.0}, {});
  });
  row("adam/beta1-one", K::InvalidArgument,
      [param](Env& e) { optim::Adam({param(e)}, {.beta1 = 1.0}); });
  row("adam/beta2-negative", K::InvalidArgument,
      [param](Env& e) { optim::Adam({param(e)}, {.beta2 = -0.1}); });
  row("adam/negative-eps", K::InvalidArgument,
      [param](Env& e) { optim::Adam({param(e)}, {.eps = -1e-8}); });
  row("adam/inf-lr", K::InvalidArgument, [param](Env& e) {
    optim::Adam({param(e)}, {.lr = std::numeric_limits<double>::infinity()});
  });
  row("adamw/negative-weight-decay", K::InvalidArgument,
      [param](Env& e) { optim::AdamW({param(e)}, {.weight_decay = -1.0}); });
  row("lbfgs/zero-max-iter", K::InvalidArgument,
      [param](Env& e) { optim::Lbfgs({param(e)}, {.max_iter = 0}); });
  row("lbfgs/zero-history", K::InvalidArgument,
      [param](Env& e) { optim::Lbfgs({param(e)}, {.history_size = 0}); });
  row("lbfgs/empty-loss", K::InvalidArgument, [param](Env& e) {
    optim::Lbfgs opt({param(e)}, {});
    (void)opt.step({});
  });
}

inline void add_program_rows(std::vector<Row>& rows) {
  auto row = [&](std::string n, ErrorKind k, std::function<void(Env&)> f, std::string op = {}) {
    rows.push_back(single_row(std::move(n), Cat::Program, k, std::move(f), std::move(op)));
  };
  auto program = [] {
    const TracedTensor p = placeholder(f64, {SymDim::var("n"), 3});
    return compile({sum(p * p)}, {p});
  };
  auto rt = [](Env& e) -> Runtime& { return *e.eager->runtime(); };
  row(
      "program/undefined-run", K::InvalidArgument,
      [rt](Env& e) {
        (void)run_compiled(rt(e), Program(), {ones({2, 3})});
      },
      "run_compiled|prepare|run|call");
  row(
      "program/undefined-prepare", K::InvalidArgument,
      [rt](Env& e) {
        const Tensor in = ones({2});
        (void)prepare(rt(e), Program(), InputSignature::of({&in, 1}));
      },
      "run_compiled|prepare|run|call");
  row(
      "program/undefined-prepared-run", K::InvalidArgument,
      [rt](Env& e) { (void)run(rt(e), PreparedProgram(), {ones({2})}); },
      "run_compiled|prepare|run|call");
  row(
      "program/too-few-inputs", K::InvalidArgument,
      [rt, program](Env& e) { (void)run_compiled(rt(e), program(), {}); },
      "run_compiled|prepare|run|call");
  row(
      "program/too-many-inputs", K::InvalidArgument,
      [rt, program](Env& e) {
        (void)run_compiled(rt(e), program(), {ones({2, 3}), ones({2, 3})});
      },
      "run_compiled|prepare|run|call");
  row(
      "program/wrong-dtype", K::DTypeMismatch,
      [rt, program](Env& e) {
        (void)run_compiled(rt(e), program(), {filled({2, 3}, c128)});
      },
      "run_compiled|prepare|run|call");
  row(
      "program/wrong-rank", K::RankMismatch,
      [rt, program](Env& e) { (void)run_compiled(rt(e), program(), {ones({6})}); },
      "run_compiled|prepare|run|call");
  row(
      "program/wrong-extent", K::ShapeMismatch,
      [rt, program](Env& e) {
        (void)run_compiled(rt(e), program(), {ones({2, 4})});
      },
      "run_compiled|prepare|run|call");
  row(
      "program/undefined-input", K::InvalidArgument,
      [rt, program](Env& e) { (void)run_compiled(rt(e), program(), {Tensor()}); }, "run_compiled");
  row(
      "program/prepared-then-wrong-shape", K::ShapeMismatch,
      [rt, program](Env& e) {
        const Program p = program();
        const Tensor in = ones({2, 3});
        const PreparedProgram pp = prepare(rt(e), p, InputSignature::of({&in, 1}));
        (void)run(rt(e), pp, {ones({2, 5})});
      },
      "run_compiled|prepare|run|call");
  // A program without symbolic sizes takes the run's fast path (inputs equal
  // to the prepared shapes bind nothing); anything else still gets the checks.
  auto static_run = [rt](Env& e, std::vector<Tensor> inputs) {
    const TracedTensor p = placeholder(f64, {2, 3});
    const Tensor in = ones({2, 3});
    const PreparedProgram pp =
        prepare(rt(e), compile({sum(exp(p) * p)}, {p}), InputSignature::of({&in, 1}));
    (void)run(rt(e), pp, inputs);
  };
  row(
      "program/static-prepared-wrong-shape", K::ShapeMismatch,
      [static_run](Env& e) {
        static_run(e, {ones({3, 2})});
      },
      "run");
  row(
      "program/static-prepared-wrong-dtype", K::DTypeMismatch,
      [static_run](Env& e) {
        static_run(e, {filled({2, 3}, f32)});
      },
      "run");
  row(
      "program/static-prepared-undefined-input", K::InvalidArgument,
      [static_run](Env& e) { static_run(e, {Tensor()}); }, "run");
  row(
      "program/static-prepared-extra-input", K::InvalidArgument,
      [static_run](Env& e) {
        static_run(e, {ones({2, 3}), ones({2, 3})});
      },
      "run");
  row(
      "program/prepared-other-runtime", K::ContextMismatch,
      [rt, program](Env& e) {
        const Program p = program();
        const Tensor in = ones({2, 3});
        const PreparedProgram pp = prepare(rt(e), p, InputSignature::of({&in, 1}));
        (void)run(*e.other->runtime(), pp, {in});
      },
      "run_compiled|prepare|run|call");
  row(
      "bind_dimensions/conflict", K::ShapeMismatch,
      [](Env&) {
        const TracedTensor a = placeholder(f64, {SymDim::var("n")});
        const TracedTensor b = placeholder(f64, {SymDim::var("n")});
        const Program p = compile({sum(a) + sum(b)}, {a, b});
        const Shape shapes[2] = {Shape{2}, Shape{3}};
        (void)bind_dimensions(p, shapes);
      },
      "bind_dimensions");
  row(
      "bind_dimensions/count", K::InvalidArgument,
      [program](Env&) {
        const Shape shapes[2] = {Shape{2, 3}, Shape{2, 3}};
        (void)bind_dimensions(program(), shapes);
      },
      "bind_dimensions");
  row(
      "bind_dimensions/negative", K::InvalidArgument,
      [program](Env&) {
        const Shape shapes[1] = {Shape{-2, 3}};
        (void)bind_dimensions(program(), shapes);
      },
      "bind_dimensions");
  row(
      "compile/input-not-placeholder", K::InvalidArgument,
      [](Env&) {
        const TracedTensor p = placeholder(f64, {2});
        (void)compile({p * 2.0}, {p * 3.0});
      },
      "compile");
  row(
      "compile/undefined-output", K::InvalidArgument,
      [](Env&) {
        const TracedTensor p = placeholder(f64, {2});
        (void)compile({TracedTensor()}, {p});
      },
      "compile");
  row(
      "compile/missing-input", K::InvalidArgument,
      [](Env&) {
        const TracedTensor p = placeholder(f64, {2}), q = placeholder(f64, {2});
        (void)compile({p + q}, {p});
      },
      "compile");
  row(
      "program/call-wrong-count", K::InvalidArgument, [program](Env&) { (void)program().call({}); },
      "run_compiled|prepare|run|call");
}

inline void add_inplace_rows(std::vector<Row>& rows) {
  // The target of an in-place form must be unchanged when the call fails.
  auto row = [&](std::string n, ErrorKind k, std::function<void(Env&)> f, std::string op = {}) {
    rows.push_back(single_row(std::move(n), Cat::InPlace, k, std::move(f), std::move(op)));
  };
  auto unchanged = [](const Tensor& t, double v) {
    for (double e : cast(t, f64, *std::make_shared<CpuBackend>()).to_vector<double>())
      if (e != v) throw std::logic_error("the in-place target changed");
  };
  row(
      "unary_into/wrong-shape", K::ShapeMismatch,
      [unchanged](Env& e) {
        const Tensor out = full(V{2}, Scalar(7.0), f64);
        try {
          unary_into(UnaryOp::Exp, ones({3}), out, *e.cpu);
        } catch (...) {
          unchanged(out, 7.0);
          throw;
        }
      },
      "exp");
  row(
      "unary_into/wrong-dtype", K::DTypeMismatch,
      [unchanged](Env& e) {
        const Tensor out = full(V{3}, Scalar(std::int64_t{7}), i64);
        try {
          unary_into(UnaryOp::Exp, ones({3}), out, *e.cpu);
        } catch (...) {
          unchanged(out, 7.0);
          throw;
        }
      },
      "exp");
  row(
      "binary_into/broadcast-mismatch", K::ShapeMismatch,
      [unchanged](Env& e) {
        const Tensor out = full(V{2, 3}, Scalar(7.0), f64);
        try {
          binary_into(BinaryOp::Add, ones({2, 3}), ones({4}), out, *e.cpu);
        } catch (...) {
          unchanged(out, 7.0);
          throw;
        }
      },
      "add");
  row(
      "binary_into/overlapping", K::InvalidArgument,
      [unchanged](Env& e) {
        const Tensor out = full(V{3}, Scalar(7.0), f64);
        try {
          binary_into(BinaryOp::Add, out.slice(0, std::nullopt, std::nullopt, -1), ones({3}), out,
                      *e.cpu);
        } catch (...) {
          unchanged(out, 7.0);
          throw;
        }
      },
      "add");
  row(
      "copy_into/wrong-shape", K::ShapeMismatch,
      [unchanged](Env&) {
        const Tensor out = full(V{3}, Scalar(7.0), f64);
        try {
          Tensor::copy_into(ones({4}), out);
        } catch (...) {
          unchanged(out, 7.0);
          throw;
        }
      },
      "copy");
  row(
      "assign_/wrong-shape", K::ShapeMismatch,
      [unchanged](Env& e) {
        EagerTensor p = e.eager->variable(full(V{3}, Scalar(7.0), f64));
        try {
          p.assign_(ones({4}));
        } catch (...) {
          unchanged(p.value(), 7.0);
          throw;
        }
      },
      "assign");
  row(
      "assign_/wrong-dtype", K::DTypeMismatch,
      [unchanged](Env& e) {
        EagerTensor p = e.eager->variable(full(V{3}, Scalar(7.0), f64));
        try {
          p.assign_(filled({3}, c128));
        } catch (...) {
          unchanged(p.value(), 7.0);
          throw;
        }
      },
      "assign");
  // fft_inplace on a 4-element tensor of 7s (`leaf`: a variable, so tracked;
  // `real`: f64 instead of c128), refused: the tensor keeps its 7s.
  auto fft_row = [&](std::string n, ErrorKind k, bool real, bool leaf, std::int64_t axis,
                     std::string_view norm) {
    row(
        std::move(n), k,
        [unchanged, real, leaf, axis, norm](Env& e) {
          const Tensor v =
              real ? full(V{4}, Scalar(7.0), f64) : full(V{4}, Scalar(c128_t(7.0, 0.0)), c128);
          EagerTensor p = leaf ? e.eager->variable(v) : e.eager->tensor(v);
          const Tensor keep = p.value();
          try {
            (void)fft::fft_inplace(std::move(p), axis, norm);
          } catch (...) {
            unchanged(keep, 7.0);
            throw;
          }
        },
        "fft");
  };
  fft_row("fft_inplace/real", K::DTypeMismatch, true, false, 0, "backward");
  fft_row("fft_inplace/axis-out-of-range", K::AxisOutOfBounds, false, false, 3, "backward");
  fft_row("fft_inplace/bad-norm", K::InvalidArgument, false, false, 0, "loud");
  fft_row("fft_inplace/tracked", K::RuntimeState, false, true, 0, "backward");
}

inline void add_single_rows(std::vector<Row>& rows) {
  add_factory_rows(rows);
  add_io_rows(rows);
  add_optim_rows(rows);
  add_program_rows(rows);
  add_inplace_rows(rows);
}

inline constexpr int kMinimumRows = 900;
inline const std::pair<const char*, int> kMinimumPerCategory[] = {
    {"dtype", 500},        {"undefined", 80}, {"zero-size/rank-0", 150}, {"axis", 50},
    {"other runtime", 30}, {"shape", 35},     {"factory", 15},           {"io", 10},
    {"program", 15},       {"in-place", 8},   {"parameter", 20}};

}  // namespace badinput
