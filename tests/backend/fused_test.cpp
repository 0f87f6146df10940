// fused_elementwise(): a pass equals the same direct ops run one by one, for
// compact, scalar and broadcast (gathered) externals, partial last blocks and
// several threads; malformed passes are typed errors before any work.

#include "tenferro/backend/fused.hpp"

#include <cmath>
#include <cstring>
#include <memory>
#include <optional>

#include "../../src/cpu/stream_store.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/reduce.hpp"
#include "test_util.hpp"

using namespace tenferro;

namespace {

using Kind = FusedElementwise::Kind;

FusedElementwise::Operand ext(std::uint32_t i) {
  return {true, i};
}
FusedElementwise::Operand step(std::uint32_t i) {
  return {false, i};
}

// y = clamp(where(a > 0, exp(a) * b, c), -1, 2) + f32->f64(d), with a [n, m],
// b [n, m], c a scalar, d [m] (broadcast along the leading axis).
FusedElementwise model_pass() {
  FusedElementwise p;
  auto add = [&](FusedElementwise::Step s) {
    p.steps.push_back(std::move(s));
    return static_cast<std::uint32_t>(p.steps.size() - 1);
  };
  FusedElementwise::Step s;
  s.kind = Kind::Unary, s.unary = UnaryOp::Exp, s.operands = {ext(0)}, s.dtype = f64;
  const auto e = add(s);
  s = {}, s.kind = Kind::Binary, s.binary = BinaryOp::Mul, s.operands = {step(e), ext(1)};
  s.dtype = f64;
  const auto m = add(s);
  s = {}, s.kind = Kind::Fill, s.value = Scalar(0.0), s.dtype = f64;
  const auto z = add(s);
  s = {}, s.kind = Kind::Binary, s.binary = BinaryOp::Gt, s.operands = {ext(0), step(z)};
  s.dtype = bool_;
  const auto gt = add(s);
  s = {}, s.kind = Kind::Select, s.operands = {step(gt), step(m), ext(2)}, s.dtype = f64;
  const auto w = add(s);
  s = {}, s.kind = Kind::Clamp, s.lo = Scalar(-1.0), s.hi = Scalar(2.0), s.operands = {step(w)};
  s.dtype = f64;
  const auto c = add(s);
  s = {}, s.kind = Kind::Convert, s.operands = {ext(3)}, s.dtype = f64;
  const auto d = add(s);
  s = {}, s.kind = Kind::Binary, s.binary = BinaryOp::Add, s.operands = {step(c), step(d)};
  s.dtype = f64;
  add(s);
  // Buffers: a distinct one per intermediate (liveness reuse is the planner's business).
  for (std::size_t i = 0; i + 1 < p.steps.size(); ++i) p.steps[i].buffer = static_cast<int>(i);
  p.buffer_count = static_cast<int>(p.steps.size() - 1);
  return p;
}

Tensor reference(const Tensor& a, const Tensor& b, const Tensor& c, const Tensor& d, Backend& cpu) {
  const Tensor w = where(gt(a, full({}, Scalar(0.0), f64), cpu), mul(exp(a, cpu), b, cpu), c, cpu);
  return add(clamp(w, Scalar(-1.0), Scalar(2.0), cpu), convert(d, f64, cpu), cpu);
}

}  // namespace

TEST(FusedElementwise, MatchesTheDirectOpsForEveryExternalKind) {
  Generator gen(7);
  for (int threads : {1, 2}) {
    CpuBackend cpu({.num_threads = threads});
    for (std::int64_t n : {1, 5, 37}) {
      const Tensor a = add(rand({n, 24}, f64, gen), full({}, Scalar(-0.5), f64), cpu);
      const Tensor b = rand({n, 24}, f64, gen);
      const Tensor c = full({}, Scalar(0.25), f64);
      const Tensor d = rand({24}, f32, gen);
      const Tensor want = reference(a, b, c, d, cpu);
      const Tensor in[4] = {a, b, c, d};
      for (std::int64_t block : {1, 7, 64, 2048}) {
        const Shape shape{n, 24};
        const Tensor got = fused_elementwise(model_pass(), in, shape.span(), cpu, block);
        EXPECT_EQ(got.shape(), shape);
        EXPECT_EQ(got.dtype(), f64);
        EXPECT_TRUE(allclose(got, want, 0.0, 0.0)) << "n=" << n << " block=" << block;
      }
    }
  }
}

// Unary and binary steps over compact and single-value externals run on raw
// pointers (the kernels' compact forms): the same bits as the direct ops, with
// a step writing the buffer it reads (in place), partial last blocks, two
// threads, bool results and real, complex and integer dtypes.
TEST(FusedElementwise, RawPointerPassesMatchTheDirectOps) {
  Generator gen(11);
  auto step_of = [](Kind k, UnaryOp u, BinaryOp b, std::vector<FusedElementwise::Operand> ops,
                    DType dt, int buffer) {
    FusedElementwise::Step s;
    s.kind = k, s.unary = u, s.binary = b, s.operands = std::move(ops), s.dtype = dt;
    s.buffer = buffer;
    return s;
  };
  int compared = 0;
  for (DType dt : {f64, f32, c128, i64}) {
    // y = (f(x) * k - x) != x  and  z = f(x) * k - x, with f = tanh (exp for
    // complex, x + x for integers, compared with >) and k a single value. Steps 0 and 1 share
    // buffer 0: step 1 overwrites the value it reads.
    const bool integer = dt == i64;
    const UnaryOp f = is_complex(dt) ? UnaryOp::Exp : UnaryOp::Tanh;
    FusedElementwise pass;
    // (Fused unary steps take floating and complex operands only: integers
    // start with x + x instead.)
    pass.steps.push_back(integer ? step_of(Kind::Binary, f, BinaryOp::Add, {ext(0), ext(0)}, dt, 0)
                                 : step_of(Kind::Unary, f, BinaryOp::Add, {ext(0)}, dt, 0));
    pass.steps.push_back(step_of(Kind::Binary, f, BinaryOp::Mul, {step(0), ext(1)}, dt, 0));
    pass.steps.push_back(step_of(Kind::Binary, f, BinaryOp::Sub, {step(1), ext(0)}, dt, -1));
    pass.buffer_count = 1;
    FusedElementwise cmp = pass;
    cmp.steps.back().buffer = 1;
    cmp.steps.push_back(step_of(Kind::Binary, f, integer ? BinaryOp::Gt : BinaryOp::Ne,
                                {step(2), ext(0)}, bool_, -1));
    cmp.buffer_count = 2;
    for (int threads : {1, 2}) {
      CpuBackend cpu({.num_threads = threads});
      for (std::int64_t n : {1, 5, 3001}) {
        const Tensor x =
            integer ? cast(mul(rand({n}, f64, gen), full({}, Scalar(1e6), f64), cpu), i64, cpu)
                    : cast(rand({n}, is_complex(dt) ? c128 : f64, gen), dt, cpu);
        const Tensor k = cast(full({}, Scalar(integer ? 3.0 : 0.75), f64), dt, cpu);
        // Exactly equal: every value is exact in c128.
        auto same = [&](const Tensor& a, const Tensor& b) {
          return a.shape() == b.shape() && a.dtype() == b.dtype() &&
                 allclose(cast(a, c128, cpu), cast(b, c128, cpu), 0.0, 0.0);
        };
        const Tensor fx = integer ? binary(BinaryOp::Add, x, x, cpu) : unary(f, x, cpu);
        const Tensor z = binary(BinaryOp::Sub, binary(BinaryOp::Mul, fx, k, cpu), x, cpu);
        const Tensor y = binary(integer ? BinaryOp::Gt : BinaryOp::Ne, z, x, cpu);
        const Tensor in[2] = {x, k};
        for (std::int64_t block : {1, 7, 2048}) {
          const Tensor got = fused_elementwise(pass, in, Shape{n}.span(), cpu, block);
          const Tensor got_cmp = fused_elementwise(cmp, in, Shape{n}.span(), cpu, block);
          EXPECT_TRUE(same(got, z)) << name(dt) << " n=" << n << " block=" << block;
          EXPECT_TRUE(same(got_cmp, y)) << name(dt) << " n=" << n << " block=" << block;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 4 * 2 * 3 * 3);
}

// Real add, sub, mul and div take per-instruction-set loops on raw blocks:
// the same bits as the direct ops, also when a step writes over the operand
// it reads (first or second), at lengths that leave vector tails.
TEST(FusedElementwise, RealArithmeticStepsMatchTheDirectOpsInPlace) {
  Generator gen(5);
  CpuBackend cpu({.num_threads = 1});
  int compared = 0;
  for (DType dt : {f64, f32}) {
    for (BinaryOp op : {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div}) {
      // s0 = x op y; s1 = s0 op y (over s0); s2 = x op s1 (over s1); out = s2 op x.
      FusedElementwise pass;
      auto push = [&](FusedElementwise::Operand a, FusedElementwise::Operand b, int buffer) {
        FusedElementwise::Step s;
        s.kind = Kind::Binary, s.binary = op, s.operands = {a, b}, s.dtype = dt;
        s.buffer = buffer;
        pass.steps.push_back(s);
      };
      push(ext(0), ext(1), 0);
      push(step(0), ext(1), 0);
      push(ext(0), step(1), 0);
      push(step(2), ext(0), -1);
      pass.buffer_count = 1;
      for (std::int64_t n : {1, 7, 64, 1001}) {
        const Tensor x = cast(add(rand({n}, f64, gen), full({}, Scalar(0.5), f64), cpu), dt, cpu);
        const Tensor y = cast(add(rand({n}, f64, gen), full({}, Scalar(0.25), f64), cpu), dt, cpu);
        const Tensor s1 = binary(op, binary(op, x, y, cpu), y, cpu);
        const Tensor want = binary(op, binary(op, x, s1, cpu), x, cpu);
        const Tensor in[2] = {x, y};
        for (std::int64_t block : {7, 2048}) {
          const Tensor got = fused_elementwise(pass, in, Shape{n}.span(), cpu, block);
          ASSERT_EQ(got.dtype(), dt);
          EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(),
                                static_cast<std::size_t>(n) * itemsize(dt)),
                    0)
              << name(dt) << " " << name(op) << " n=" << n << " block=" << block;
          ++compared;
        }
      }
    }
  }
  EXPECT_EQ(compared, 2 * 4 * 4 * 2);
}

// Two real arithmetic steps where the second reads the first's value once
// run as one loop: the same bits as the direct ops for every pair of ops,
// with that value on either side of the second op, written over the
// buffer of the second op's other operand, at lengths with vector tails. A
// contracted x * y - z (one FMA) differs from them: checked to occur.
TEST(FusedElementwise, PairedArithmeticStepsMatchTheDirectOps) {
  Generator gen(7);
  CpuBackend cpu({.num_threads = 1});
  const BinaryOp ops[] = {BinaryOp::Add, BinaryOp::Sub, BinaryOp::Mul, BinaryOp::Div};
  int compared = 0, fma_differs = 0;
  for (DType dt : {f64, f32}) {
    for (std::int64_t n : {1, 13, 1001}) {
      auto input = [&](double lo) {
        return cast(add(rand({n}, f64, gen), full({}, Scalar(lo), f64), cpu), dt, cpu);
      };
      const Tensor x = input(0.5), y = input(0.25), z = input(0.75);
      const Tensor in[3] = {x, y, z};
      for (BinaryOp op1 : ops) {
        for (BinaryOp op2 : ops) {
          for (bool right : {false, true}) {
            // w = -z (buffer 1); s = x op1 y (buffer 0); t = s op2 w or
            // w op2 s, over w (buffer 1); out = -t.
            FusedElementwise pass;
            auto push = [&](Kind k, UnaryOp u, BinaryOp b, std::vector<FusedElementwise::Operand> o,
                            int buffer) {
              FusedElementwise::Step st;
              st.kind = k, st.unary = u, st.binary = b, st.operands = std::move(o), st.dtype = dt;
              st.buffer = buffer;
              pass.steps.push_back(st);
            };
            push(Kind::Unary, UnaryOp::Neg, op1, {ext(2)}, 1);
            push(Kind::Binary, UnaryOp::Neg, op1, {ext(0), ext(1)}, 0);
            push(Kind::Binary, UnaryOp::Neg, op2,
                 right ? std::vector{step(0), step(1)} : std::vector{step(1), step(0)}, 1);
            push(Kind::Unary, UnaryOp::Neg, op1, {step(2)}, -1);
            pass.buffer_count = 2;
            const Tensor w = unary(UnaryOp::Neg, z, cpu), sv = binary(op1, x, y, cpu);
            const Tensor want =
                unary(UnaryOp::Neg, right ? binary(op2, w, sv, cpu) : binary(op2, sv, w, cpu), cpu);
            for (std::int64_t block : {7, 2048}) {
              const Tensor got = fused_elementwise(pass, in, Shape{n}.span(), cpu, block);
              ASSERT_EQ(got.dtype(), dt);
              EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(),
                                    static_cast<std::size_t>(n) * itemsize(dt)),
                        0)
                  << name(dt) << " " << name(op1) << " " << name(op2) << (right ? " right" : "")
                  << " n=" << n << " block=" << block;
              ++compared;
            }
            if (dt == f64 && op1 == BinaryOp::Mul && op2 == BinaryOp::Add && !right) {
              const auto xv = x.to_vector<double>(), yv = y.to_vector<double>();
              const auto zv = z.to_vector<double>(), wv = want.to_vector<double>();
              for (std::int64_t i = 0; i < n; ++i)
                fma_differs += -std::fma(xv[i], yv[i], -zv[i]) != wv[i];
            }
          }
        }
      }
    }
  }
  EXPECT_EQ(compared, 2 * 3 * 4 * 4 * 2 * 2);
  EXPECT_GT(fma_differs, 0);
}

// Passes that move the streaming threshold of eager arithmetic
// (cpu::stream_threshold_bytes at the pool's threads) end in the streaming
// form of their last arithmetic step or pair (cpu/stream_arith.hpp): the
// same bits as the direct ops, on one thread and two, for each op in either
// place of a pair, the pair's first value on either side, a single-value
// external (splatted) and an unpaired last step, and blocks of 7 elements
// (outputs off the line boundary in every block, ragged ends).
TEST(FusedElementwise, StreamedOutputsMatchTheDirectOps) {
  Generator gen(9);
  struct Pair {
    BinaryOp op1, op2;
    bool right;
  };
  const Pair pairs[] = {{BinaryOp::Mul, BinaryOp::Add, false},
                        {BinaryOp::Sub, BinaryOp::Div, true},
                        {BinaryOp::Div, BinaryOp::Sub, false},
                        {BinaryOp::Add, BinaryOp::Mul, true}};
  int compared = 0;
  for (const int threads : {1, 2}) {
    CpuBackend cpu({.num_threads = threads});
    for (const DType dt : {f64, f32}) {
      // Two compact externals and the output: 3 runs moved.
      const auto item = static_cast<std::int64_t>(itemsize(dt));
      const std::int64_t n =
          static_cast<std::int64_t>(cpu::stream_threshold_bytes(threads)) / (3 * item) + 101;
      auto input = [&](double lo) {
        return cast(add(rand({n}, f64, gen), full({}, Scalar(lo), f64), cpu), dt, cpu);
      };
      const Tensor x = input(0.5), y = input(0.25);
      const Tensor t = cast(full({}, Scalar(0.375), f64), dt, cpu);
      auto expect_equal = [&](const Tensor& got, const Tensor& want, const std::string& what) {
        ASSERT_EQ(got.dtype(), dt);
        EXPECT_EQ(std::memcmp(got.raw_data(), want.raw_data(), static_cast<std::size_t>(n * item)),
                  0)
            << what << " " << name(dt) << " on " << threads << " thread(s)";
        ++compared;
      };
      auto push = [&](FusedElementwise& pass, Kind k, BinaryOp b,
                      std::vector<FusedElementwise::Operand> o, int buffer) {
        FusedElementwise::Step st;
        st.kind = k, st.unary = UnaryOp::Neg, st.binary = b, st.operands = std::move(o);
        st.dtype = dt, st.buffer = buffer;
        pass.steps.push_back(st);
      };
      for (const Pair& p : pairs) {
        // out = (t op1 x) op2 y, or y op2 (t op1 x); t a single value.
        FusedElementwise pass;
        push(pass, Kind::Binary, p.op1, {ext(0), ext(1)}, 0);
        push(pass, Kind::Binary, p.op2,
             p.right ? std::vector{ext(2), step(0)} : std::vector{step(0), ext(2)}, -1);
        pass.buffer_count = 1;
        const Tensor in[3] = {t, x, y};
        const Tensor mid = binary(p.op1, t, x, cpu);
        const Tensor want = p.right ? binary(p.op2, y, mid, cpu) : binary(p.op2, mid, y, cpu);
        for (const std::int64_t block : {std::int64_t{7}, std::int64_t{2048}}) {
          expect_equal(fused_elementwise(pass, in, Shape{n}.span(), cpu, block), want,
                       std::string(name(p.op1)) + " then " + std::string(name(p.op2)) +
                           (p.right ? " (right)" : "") + ", block " + std::to_string(block));
        }
      }
      // out = -x * y: a last step that pairs with nothing.
      FusedElementwise single;
      push(single, Kind::Unary, BinaryOp::Mul, {ext(0)}, 0);
      push(single, Kind::Binary, BinaryOp::Mul, {step(0), ext(1)}, -1);
      single.buffer_count = 1;
      const Tensor in2[2] = {x, y};
      expect_equal(fused_elementwise(single, in2, Shape{n}.span(), cpu),
                   binary(BinaryOp::Mul, unary(UnaryOp::Neg, x, cpu), y, cpu), "-x * y");
    }
  }
  EXPECT_EQ(compared, 2 * 2 * (4 * 2 + 1));
}

TEST(FusedElementwise, ZeroSizeAndStridedExternals) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(3);
  const Tensor a = rand({0, 3}, f64, gen);
  const Tensor in0[4] = {a, a, full({}, Scalar(1.0), f64), rand({3}, f32, gen)};
  EXPECT_EQ(fused_elementwise(model_pass(), in0, Shape{0, 3}.span(), cpu).numel(), 0);
  // A transposed (non-compact) external is gathered per block.
  const Tensor big = rand({6, 4}, f64, gen);
  const Tensor at = big.transpose(0, 1);  // [4, 6], strided view
  const Tensor b = rand({4, 6}, f64, gen);
  const Tensor c = full({}, Scalar(-0.5), f64), d = rand({6}, f32, gen);
  const Tensor in[4] = {at, b, c, d};
  const Tensor got = fused_elementwise(model_pass(), in, Shape{4, 6}.span(), cpu, 5);
  EXPECT_TRUE(allclose(got, reference(at, b, c, d, cpu), 0.0, 0.0));
}

TEST(FusedElementwise, MalformedPassesAreTypedErrors) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(1);
  const Tensor a = rand({4}, f64, gen);
  const Tensor in[4] = {a, a, a, rand({4}, f32, gen)};
  const Shape shape{4};
  EXPECT_TF_ERROR(fused_elementwise(FusedElementwise{}, in, shape.span(), cpu),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fused_elementwise(model_pass(), in, shape.span(), cpu, 0),
                  ErrorKind::InvalidArgument);
  FusedElementwise p = model_pass();
  p.steps[1].operands[1] = ext(9);  // no such external
  EXPECT_TF_ERROR(fused_elementwise(p, in, shape.span(), cpu), ErrorKind::InvalidArgument);
  p = model_pass();
  p.steps[1].operands[0] = step(4);  // a later step
  EXPECT_TF_ERROR(fused_elementwise(p, in, shape.span(), cpu), ErrorKind::InvalidArgument);
  p = model_pass();
  p.steps[0].buffer = p.buffer_count;  // no such buffer
  EXPECT_TF_ERROR(fused_elementwise(p, in, shape.span(), cpu), ErrorKind::InvalidArgument);
  p = model_pass();
  p.steps[1].operands.pop_back();  // a binary step with one operand
  EXPECT_TF_ERROR(fused_elementwise(p, in, shape.span(), cpu), ErrorKind::InvalidArgument);
  // Operands of the wrong dtype for a step: i64 into exp, mixed binary operands.
  const Tensor ints[4] = {zeros({4}, i64), a, a, in[3]};
  EXPECT_TF_ERROR(fused_elementwise(model_pass(), ints, shape.span(), cpu),
                  ErrorKind::DTypeMismatch);
  const Tensor mixed[4] = {a, zeros({4}, f32), a, in[3]};
  EXPECT_TF_ERROR(fused_elementwise(model_pass(), mixed, shape.span(), cpu),
                  ErrorKind::DTypeMismatch);
  // An external that does not broadcast to the pass shape.
  const Tensor wide[4] = {rand({5}, f64, gen), a, a, in[3]};
  EXPECT_TF_ERROR(fused_elementwise(model_pass(), wide, shape.span(), cpu),
                  ErrorKind::ShapeMismatch);
  const Tensor higher[4] = {rand({4, 2}, f64, gen), a, a, in[3]};
  EXPECT_TF_ERROR(fused_elementwise(model_pass(), higher, shape.span(), cpu),
                  ErrorKind::ShapeMismatch);
}

// fused_reduce_all(): the reduction of the pass's result over every element,
// bit for bit what reduce() over all axes of fused_elementwise's result
// gives: sums, products and means; f64, f32, c128; one leaf, many leaves,
// parts above twice the parallel threshold, one and two threads; raw passes
// and passes with select/clamp/convert steps (materialised, then reduced).
TEST(FusedReduceAll, EqualsTheReductionOfThePassBitForBit) {
  Generator gen(5);
  auto same_bits = [](const Tensor& a, const Tensor& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() && a.numel() == 1 &&
           std::memcmp(a.raw_data(), b.raw_data(), itemsize(a.dtype())) == 0;
  };
  int compared = 0;
  for (int threads : {1, 2}) {
    CpuBackend cpu({.num_threads = threads, .parallel_threshold = 1000});
    for (DType dt : {f64, f32, c128}) {
      // z = f(x) * k + x with k a single value, f = tanh (exp for complex).
      FusedElementwise pass;
      FusedElementwise::Step s;
      s.kind = Kind::Unary, s.unary = is_complex(dt) ? UnaryOp::Exp : UnaryOp::Tanh;
      s.operands = {ext(0)}, s.dtype = dt, s.buffer = 0;
      pass.steps.push_back(s);
      s = {}, s.kind = Kind::Binary, s.binary = BinaryOp::Mul, s.operands = {step(0), ext(1)};
      s.dtype = dt, s.buffer = 1;
      pass.steps.push_back(s);
      s = {}, s.kind = Kind::Binary, s.binary = BinaryOp::Add, s.operands = {step(1), ext(0)};
      s.dtype = dt;
      pass.steps.push_back(s);
      pass.buffer_count = 2;
      for (std::int64_t n : {1, 5, 1024, 1025, 1999, 2000, 7001, 70000}) {
        const Tensor x = cast(rand({n}, is_complex(dt) ? c128 : f64, gen), dt, cpu);
        const Tensor k = cast(full({}, Scalar(1e-3), f64), dt, cpu);
        const Tensor in[2] = {x, k};
        const Tensor values = fused_elementwise(pass, in, Shape{n}.span(), cpu);
        for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Prod, ReduceOp::Mean}) {
          const std::int64_t axes[1] = {0};
          const Tensor want = reduce(op, values, axes, cpu);
          for (std::int64_t block : {7, 2048}) {
            const Tensor got = fused_reduce_all(pass, op, in, Shape{n}.span(), cpu, block);
            EXPECT_TRUE(same_bits(got, want)) << name(dt) << " " << name(op) << " n=" << n;
            ++compared;
          }
        }
      }
    }
    // A pass with select, clamp, convert and a broadcast external.
    const Tensor a = add(rand({300, 24}, f64, gen), full({}, Scalar(-0.5), f64), cpu);
    const Tensor b = rand({300, 24}, f64, gen), d = rand({24}, f32, gen);
    const Tensor in[4] = {a, b, full({}, Scalar(0.25), f64), d};
    const Shape shape{300, 24};
    const std::int64_t axes[2] = {0, 1};
    const Tensor values = fused_elementwise(model_pass(), in, shape.span(), cpu);
    for (ReduceOp op : {ReduceOp::Sum, ReduceOp::Mean}) {
      EXPECT_TRUE(same_bits(fused_reduce_all(model_pass(), op, in, shape.span(), cpu),
                            reduce(op, values, axes, cpu)));
      ++compared;
    }
  }
  EXPECT_EQ(compared, 2 * (3 * 8 * 3 * 2 + 2));
}

TEST(FusedReduceAll, EmptyPassesAndTypedErrors) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(2);
  const Tensor e = rand({0, 3}, f64, gen);
  const Tensor in0[4] = {e, e, full({}, Scalar(1.0), f64), rand({3}, f32, gen)};
  const Shape empty{0, 3};
  EXPECT_EQ(fused_reduce_all(model_pass(), ReduceOp::Sum, in0, empty.span(), cpu).item<double>(),
            0.0);
  EXPECT_EQ(fused_reduce_all(model_pass(), ReduceOp::Prod, in0, empty.span(), cpu).item<double>(),
            1.0);
  EXPECT_TRUE(std::isnan(
      fused_reduce_all(model_pass(), ReduceOp::Mean, in0, empty.span(), cpu).item<double>()));
  const Tensor a = rand({4}, f64, gen);
  const Tensor in[4] = {a, a, a, rand({4}, f32, gen)};
  const Shape shape{4};
  EXPECT_EQ(fused_reduce_all(model_pass(), ReduceOp::Sum, in, shape.span(), cpu).rank(), 0);
  EXPECT_TF_ERROR(fused_reduce_all(model_pass(), ReduceOp::Max, in, shape.span(), cpu),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(fused_reduce_all(model_pass(), ReduceOp::Sum, in, shape.span(), cpu, 0),
                  ErrorKind::InvalidArgument);
  FusedElementwise cmp;  // a bool result
  FusedElementwise::Step s;
  s.kind = Kind::Binary, s.binary = BinaryOp::Gt, s.operands = {ext(0), ext(1)}, s.dtype = bool_;
  cmp.steps.push_back(s);
  EXPECT_TF_ERROR(fused_reduce_all(cmp, ReduceOp::Sum, in, shape.span(), cpu),
                  ErrorKind::DTypeMismatch);
  const Tensor wide[4] = {rand({5}, f64, gen), a, a, in[3]};
  EXPECT_TF_ERROR(fused_reduce_all(model_pass(), ReduceOp::Sum, wide, shape.span(), cpu),
                  ErrorKind::ShapeMismatch);
}

// CheckedFusedPass: checked once when built (the same errors as the free
// functions), then each run checks only the externals; values equal the
// free functions' bit for bit.
TEST(CheckedFusedPass, ChecksOnceAndRunsLikeTheFreeFunctions) {
  CpuBackend cpu({.num_threads = 1});
  Generator gen(9);
  const Tensor a = add(rand({6, 5}, f64, gen), full({}, Scalar(-0.5), f64), cpu);
  const Tensor b = rand({6, 5}, f64, gen), d = rand({5}, f32, gen);
  const Tensor in[4] = {a, b, full({}, Scalar(0.25), f64), d};
  const Shape shape{6, 5};
  const std::vector<DType> dtypes{f64, f64, f64, f32};
  const CheckedFusedPass values(model_pass(), dtypes);
  const CheckedFusedPass total(model_pass(), dtypes, ReduceOp::Sum);
  EXPECT_EQ(max_abs_diff(values.run(in, shape.span(), cpu),
                         fused_elementwise(model_pass(), in, shape.span(), cpu)),
            0.0);
  const Tensor s = total.run(in, shape.span(), cpu);
  const Tensor want = fused_reduce_all(model_pass(), ReduceOp::Sum, in, shape.span(), cpu);
  EXPECT_EQ(std::memcmp(s.raw_data(), want.raw_data(), sizeof(double)), 0);
  // Built for the wrong dtypes, or with an unsupported reduction: errors at once.
  EXPECT_TF_ERROR(CheckedFusedPass(model_pass(), {i64, f64, f64, f32}), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(CheckedFusedPass(model_pass(), {f64}), ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(CheckedFusedPass(model_pass(), dtypes, ReduceOp::Max),
                  ErrorKind::InvalidArgument);
  // Per run: count, dtype, shape, block.
  EXPECT_TF_ERROR(values.run(std::span<const Tensor>(in, 3), shape.span(), cpu),
                  ErrorKind::InvalidArgument);
  const Tensor as_f32[4] = {cast(a, f32, cpu), b, in[2], d};
  EXPECT_TF_ERROR(values.run(as_f32, shape.span(), cpu), ErrorKind::DTypeMismatch);
  const Tensor wide[4] = {rand({7, 5}, f64, gen), b, in[2], d};
  EXPECT_TF_ERROR(values.run(wide, shape.span(), cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(values.run(in, shape.span(), cpu, 0), ErrorKind::InvalidArgument);
}

namespace {

// A backend that runs fused passes through a CpuBackend but keeps
// Backend::prepare_fused's default.
class ForwardingBackend final : public Backend {
 public:
  explicit ForwardingBackend(CpuBackend& cpu) : cpu_(cpu) {}
  std::string_view kind() const override { return cpu_.kind(); }
  Placement placement() const override { return cpu_.placement(); }
  Tensor empty(std::span<const std::int64_t> shape, DType dtype) override {
    return cpu_.empty(shape, dtype);
  }
  void fused_elementwise(const FusedElementwise& pass, std::span<const Tensor> externals,
                         std::int64_t block, const Tensor& out) override {
    cpu_.fused_elementwise(pass, externals, block, out);
  }
  void fused_reduce_all(const FusedElementwise& pass, std::span<const Tensor> externals,
                        std::span<const std::int64_t> shape, ReduceOp op, std::int64_t block,
                        const Tensor& out) override {
    cpu_.fused_reduce_all(pass, externals, shape, op, block, out);
  }

 private:
  CpuBackend& cpu_;
};

// z = x * k + y * x (two pairs of arithmetic steps: runs raw, pairs, and
// streams its output when large).
FusedElementwise arithmetic_pass() {
  FusedElementwise p;
  FusedElementwise::Step s;
  s.kind = Kind::Binary, s.binary = BinaryOp::Mul, s.operands = {ext(0), ext(1)}, s.dtype = f64;
  s.buffer = 0;
  p.steps.push_back(s);
  s.operands = {ext(2), ext(0)}, s.buffer = 1;
  p.steps.push_back(s);
  s.binary = BinaryOp::Add, s.operands = {step(0), step(1)}, s.buffer = -1;
  p.steps.push_back(s);
  p.buffer_count = 2;
  return p;
}

}  // namespace

// Backend::prepare_fused: a prepared pass gives what CheckedFusedPass::run
// gives, bit for bit, on every path of the CPU executor (raw pointers,
// paired and streamed steps, gathered externals, steps without a compact
// kernel, fused reductions, empty shapes, one and two threads) and through
// the default of a backend that does not override it; the prepared pass
// holds its own copy of the pass.
TEST(PreparedFusedPass, RunsLikeTheCheckedPassOnEveryPath) {
  Generator gen(12);
  auto same_bits = [](const Tensor& a, const Tensor& b) {
    return a.dtype() == b.dtype() && a.shape() == b.shape() &&
           std::memcmp(a.raw_data(), b.raw_data(), a.numel() * itemsize(a.dtype())) == 0;
  };
  int compared = 0;
  for (int threads : {1, 2}) {
    CpuBackend cpu({.num_threads = threads, .parallel_threshold = 1000});
    ForwardingBackend forwarding(cpu);
    for (Backend* backend : {static_cast<Backend*>(&cpu), static_cast<Backend*>(&forwarding)}) {
      // Arithmetic: compact and single-value externals, then a broadcast one.
      for (std::optional<ReduceOp> op : {std::optional<ReduceOp>{}, std::optional{ReduceOp::Sum},
                                         std::optional{ReduceOp::Mean}}) {
        std::unique_ptr<PreparedFusedPass> prepared;
        std::optional<CheckedFusedPass> checked;
        {
          FusedElementwise pass = arithmetic_pass();
          checked.emplace(pass, std::vector<DType>{f64, f64, f64}, op);
          prepared = backend->prepare_fused(*checked);
          pass.steps.clear();  // the prepared pass keeps its own copy
        }
        // 2^21 doubles stream the output (48 MiB read, 16 MiB written).
        for (std::int64_t n : {std::int64_t{0}, std::int64_t{1}, std::int64_t{5},
                               std::int64_t{1025}, std::int64_t{7001}, std::int64_t{1} << 21}) {
          const Tensor x = rand({n}, f64, gen), y = rand({n}, f64, gen);
          const Tensor k = full({}, Scalar(0.5), f64);
          const Tensor row = rand({1}, f64, gen);
          for (const Tensor& third : {y, row}) {
            const Tensor in[3] = {x, k, third};
            for (std::int64_t block : {7, 2048}) {
              if (block == 7 && n > 10000) continue;  // as 2048, but slower
              const Tensor got = prepared->run(in, Shape{n}.span(), block);
              EXPECT_TRUE(same_bits(got, checked->run(in, Shape{n}.span(), *backend, block)))
                  << "n=" << n << " block=" << block << " threads=" << threads;
              ++compared;
            }
          }
        }
        // A strided external: gathered per block.
        const Tensor big = rand({6, 40}, f64, gen);
        const Tensor at = big.transpose(0, 1);
        const Tensor in[3] = {at, full({}, Scalar(2.0), f64), rand({40, 6}, f64, gen)};
        EXPECT_TRUE(same_bits(prepared->run(in, Shape{40, 6}.span(), 2048),
                              checked->run(in, Shape{40, 6}.span(), *backend)));
        ++compared;
      }
      // Select, clamp and convert steps: no compact kernel, run through tensors.
      const Tensor a = add(rand({300, 24}, f64, gen), full({}, Scalar(-0.5), f64), cpu);
      const Tensor in[4] = {a, rand({300, 24}, f64, gen), full({}, Scalar(0.25), f64),
                            rand({24}, f32, gen)};
      const Shape shape{300, 24};
      for (std::optional<ReduceOp> op : {std::optional<ReduceOp>{}, std::optional{ReduceOp::Sum}}) {
        const CheckedFusedPass checked(model_pass(), {f64, f64, f64, f32}, op);
        const auto prepared = backend->prepare_fused(checked);
        EXPECT_TRUE(same_bits(prepared->run(in, shape.span(), 2048),
                              checked.run(in, shape.span(), *backend)));
        ++compared;
      }
    }
  }
  EXPECT_EQ(compared, 2 * 2 * (3 * (5 * 2 * 2 + 2 + 1) + 2));
}
