// LU family: lu_factor(_ex), lu, lu_solve, solve(_ex), inv(_ex).

#include "factor_test_util.hpp"
#include "tenferro/core/report_as.hpp"

TEST(LinalgLu, FactorsEveryShapeAndDtype) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  for (DType dt : kAll) {
    for (Shape s : {Shape{4, 4, 3}, Shape{5, 3, 2}, Shape{3, 5, 2}, Shape{1, 1}, Shape{6, 6}}) {
      const Tensor A = make(s, dt, 0.4);
      auto [P, L, U] = la::lu(A, true, cpu);
      const std::int64_t m = s[0], n = s[1], k = std::min(m, n);
      EXPECT_EQ(L.shape()[1], k);
      EXPECT_EQ(U.shape()[0], k);
      // P L U = A, L unit lower, U upper, P a permutation.
      const auto Lv = vals(L), Uv = vals(U), Pv = vals(P);
      for (std::int64_t b = 0; b < batches(s); ++b) {
        for (std::int64_t i = 0; i < m; ++i)
          for (std::int64_t j = 0; j < k; ++j) {
            if (i == j) {
              EXPECT_EQ(at(Lv, m, k, b, i, j), cd(1));
            }
            if (i < j) {
              EXPECT_EQ(at(Lv, m, k, b, i, j), cd(0));
            }
            // Partial pivoting (complex pivots maximise |re| + |im|, as LAPACK does).
            EXPECT_LE(std::abs(at(Lv, m, k, b, i, j)),
                      (is_complex(dt) ? std::sqrt(2.0) : 1.0) + 1e-6);
          }
        for (std::int64_t i = 0; i < k; ++i)
          for (std::int64_t j = 0; j < i; ++j) EXPECT_EQ(at(Uv, k, n, b, i, j), cd(0));
        for (std::int64_t i = 0; i < m; ++i) {
          double row = 0;
          for (std::int64_t j = 0; j < m; ++j) row += std::abs(at(Pv, m, m, b, i, j));
          EXPECT_EQ(row, 1.0);
        }
      }
      auto [lu, piv] = la::lu_factor(A, true, cpu);
      EXPECT_EQ(piv.dtype(), DType::I32);
      EXPECT_EQ(piv.shape()[0], k);
      for (std::int32_t p : piv.to_vector<std::int32_t>()) {
        EXPECT_GE(p, 1);
        EXPECT_LE(p, m);
      }
      // P L U == A, through the library's own matmul too.
      const Tensor PLU = matmul(matmul(P, L, cpu), U, cpu);
      EXPECT_LT(max_diff(PLU, A), 10 * tol(dt)) << name(dt) << " " << s[0] << "x" << s[1];
      // A strided input factors the same.
      auto [lu2, piv2] = la::lu_factor(tftest::strided_copy(A), true, cpu);
      EXPECT_EQ(max_diff(lu, lu2), 0.0);
      EXPECT_EQ(piv.to_vector<std::int32_t>(), piv2.to_vector<std::int32_t>());
    }
  }
}

TEST(LinalgLu, ZeroSizeMatricesAndBatches) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  for (Shape s : {Shape{0, 0}, Shape{3, 0, 2}, Shape{0, 3}, Shape{4, 4, 0}}) {
    auto [lu, piv, info] = la::lu_factor_ex(make(s, DType::F64, 1), true, cpu);
    EXPECT_EQ(lu.shape(), s);
    EXPECT_EQ(piv.shape()[0], std::min(s[0], s[1]));
    auto [P, L, U] = la::lu(make(s, DType::F64, 1), true, cpu);
    EXPECT_EQ(P.shape()[0], s[0]);
    EXPECT_EQ(U.shape()[1], s[1]);
  }
  const Tensor A = make({0, 0, 2}, DType::C128, 1);
  EXPECT_EQ(la::inv(A, cpu).shape(), (Shape{0, 0, 2}));
  EXPECT_EQ(la::solve(A, make({0, 3, 2}, DType::C128, 1), true, cpu).shape(), (Shape{0, 3, 2}));
  const Tensor Ab = make({3, 3, 0}, DType::F32, 1);
  EXPECT_EQ(la::solve(Ab, make({3, 2, 0}, DType::F32, 1), true, cpu).shape(), (Shape{3, 2, 0}));
}

TEST(LinalgSolve, ResidualsLeftRightVectorAndAdjoint) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 2});
  for (DType dt : kAll) {
    const Tensor A = make({4, 4, 3}, dt, 0.2, true);
    const Tensor B = make({4, 2, 3}, dt, 0.9);
    EXPECT_LT(product_error(A, la::solve(A, B, true, cpu), B), tol(dt));
    const Tensor Br = make({2, 4, 3}, dt, 1.7);
    EXPECT_LT(product_error(la::solve(A, Br, false, cpu), A, Br), tol(dt));
    // A batch of vectors [n, batch...] gives vectors.
    const Tensor v = make({4, 3}, dt, 2.5);
    const Tensor xv = la::solve(A, v, true, cpu);
    EXPECT_EQ(xv.shape(), (Shape{4, 3}));
    EXPECT_LT(product_error(A, xv.reshape({4, 1, 3}), v.reshape({4, 1, 3})), tol(dt));
    // lu_solve with the adjoint: A^H X = B.
    auto [lu, piv] = la::lu_factor(A, true, cpu);
    const Tensor Xa = la::lu_solve(lu, piv, B, true, true, cpu);
    const Tensor AH =
        is_complex(dt) ? conj(A.transpose(0, 1), cpu) : A.transpose(0, 1).contiguous();
    EXPECT_LT(product_error(AH, Xa, B), tol(dt));
    const Tensor Xr = la::lu_solve(lu, piv, Br, false, true, cpu);  // X A^H = B
    EXPECT_LT(product_error(Xr, AH, Br), tol(dt));
    // inv(A) A = I.
    const Tensor I = la::inv(A, cpu);
    const auto IA = vals(matmul(I, A, cpu));
    for (std::int64_t b = 0; b < 3; ++b)
      for (std::int64_t i = 0; i < 4; ++i)
        for (std::int64_t j = 0; j < 4; ++j)
          EXPECT_NEAR(std::abs(at(IA, 4, 4, b, i, j) - cd(i == j ? 1 : 0)), 0, tol(dt));
    // Strided inputs solve the same.
    EXPECT_LT(max_diff(la::solve(tftest::strided_copy(A), tftest::strided_copy(B), true, cpu),
                       la::solve(A, B, true, cpu)),
              tol(dt));
  }
}

// solve factors and solves each matrix in one visit; lu_factor then
// lu_solve makes the same LAPACK calls on the same numbers, so the same bits,
// on one thread and split over two.
TEST(LinalgSolve, ManySmallMatricesMatchLuFactorThenLuSolve) {
  for (int threads : {1, 2}) {
    CpuBackend cpu(CpuBackendOptions{.num_threads = threads});
    for (DType dt : kAll) {
      const Tensor A = make({5, 5, 300}, dt, 0.3, true);
      const Tensor B = make({5, 2, 300}, dt, 1.1);
      auto [lu, piv] = la::lu_factor(A, true, cpu);
      EXPECT_EQ(vals(la::solve(A, B, true, cpu)), vals(la::lu_solve(lu, piv, B, true, false, cpu)))
          << name(dt) << " at " << threads << " threads";
    }
  }
}

TEST(LinalgSolve, SingularIsTypedWithBatchIndexOrInfo) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  // Matrix 1 of the batch is singular (two equal columns).
  const Tensor A = Tensor::from_col_major({2, 2, 2}, std::vector<double>{2, 1, 1, 3, 1, 2, 1, 2});
  const Tensor B = Tensor::from_col_major({2, 1, 2}, std::vector<double>{1, 2, 3, 4});
  for (auto call :
       {+[](const Tensor&a, const Tensor&b, Backend&be) { (void)la::solve(a, b, true, be); },
        +[](const Tensor&a, const Tensor&, Backend&be) { (void)la::inv(a, be); },
        +[](const Tensor&a, const Tensor&, Backend&be) { (void)la::lu_factor(a, true, be); }}) {
    try {
      call(A, B, cpu);
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Singular);
      EXPECT_NE(std::string(e.what()).find("matrix 1 of the batch"), std::string::npos) << e.what();
    }
  }
  EXPECT_EQ(std::get<2>(la::lu_factor_ex(A, true, cpu)).to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(la::solve_ex(A, B, true, cpu).second.to_vector<std::int32_t>(),
            (std::vector<std::int32_t>{0, 2}));
  EXPECT_EQ(la::inv_ex(A, cpu).second.to_vector<std::int32_t>(), (std::vector<std::int32_t>{0, 2}));
  // lu() factors a singular matrix without error, like PyTorch.
  EXPECT_EQ(std::get<2>(la::lu(A, true, cpu)).shape(), (Shape{2, 2, 2}));
  // The eager tier raises the same kind, and so does a traced program at run time.
  EXPECT_TF_ERROR(la::solve(rt()->tensor(A), rt()->tensor(B)), ErrorKind::Singular);
  const TracedTensor ta = placeholder(DType::F64, {2, 2, 2}),
                     tb = placeholder(DType::F64, {2, 1, 2});
  const TracedTensor tx = la::inv(ta);
  const Program p = compile(std::span<const TracedTensor>(&tx, 1), {ta, tb});
  EXPECT_TF_ERROR(run_compiled(*rt()->runtime(), p, {A, B}), ErrorKind::Singular);
}

TEST(LinalgSolve, BadArgumentsAreTyped) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = make({3, 3}, DType::F64, 1, true);
  EXPECT_TF_ERROR(la::solve(make({3, 2}, DType::F64, 1), make({3, 1}, DType::F64, 1), true, cpu),
                  ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::solve(A, make({2, 1}, DType::F64, 1), true, cpu), ErrorKind::ShapeMismatch);
  EXPECT_TF_ERROR(la::solve(A, make({3, 1}, DType::F32, 1), true, cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(la::inv(make({3}, DType::F64, 1), cpu), ErrorKind::RankMismatch);
  EXPECT_TF_ERROR(la::inv(zeros({2, 2}, DType::I64), cpu), ErrorKind::DTypeMismatch);
  EXPECT_TF_ERROR(la::lu_factor(A, false, cpu), ErrorKind::InvalidArgument);
  auto [lu, piv] = la::lu_factor(A, true, cpu);
  const Tensor bad = Tensor::from_col_major({3}, std::vector<std::int32_t>{1, 7, 3});
  EXPECT_TF_ERROR(la::lu_solve(lu, bad, make({3, 1}, DType::F64, 1), true, false, cpu),
                  ErrorKind::InvalidArgument);
  EXPECT_TF_ERROR(la::lu_solve(lu, lu, make({3, 1}, DType::F64, 1), true, false, cpu),
                  ErrorKind::DTypeMismatch);
  // B is checked before a singular A is factorised, in every tier (the
  // traced tier sees a bad B while building, the others used to say Singular).
  const Tensor S = zeros({3, 3});
  for (const Tensor& B : {zeros({3, 1}, DType::Bool), zeros({2, 1})}) {
    const ErrorKind k =
        B.dtype() == DType::Bool ? ErrorKind::DTypeMismatch : ErrorKind::ShapeMismatch;
    EXPECT_TF_ERROR(la::solve(S, B, true, cpu), k);
    EXPECT_TF_ERROR(la::solve(rt()->tensor(S), rt()->tensor(B)), k);
    EXPECT_TF_ERROR(
        la::solve(placeholder(f64, {3, 3}), placeholder(B.dtype(), to_sym_shape(B.shape()))), k);
  }
  EXPECT_TF_ERROR(la::solve(S, zeros({3, 1}), true, cpu), ErrorKind::Singular);
}

TEST(LinalgLu, GradientsMatchFiniteDifferences) {
  for (DType dt : {DType::F64, DType::C128}) {
    for (Shape s : {Shape{3, 3}, Shape{4, 2}, Shape{2, 4}, Shape{3, 3, 2}}) {
      const EagerTensor A = rt()->tensor(make(s, dt, 0.3));
      auto r = check_gradients(
          [](std::span<const EagerTensor> x) { return la::lu_factor(x[0]).first; }, {A});
      EXPECT_TRUE(r.ok) << r.detail << " " << name(dt) << " lu_factor " << s[0] << "x" << s[1];
      for (int out : {1, 2}) {
        auto rl = check_gradients(
            [out](std::span<const EagerTensor> x) {
              auto [P, L, U] = la::lu(x[0]);
              return out == 1 ? L : U;
            },
            {A});
        EXPECT_TRUE(rl.ok) << rl.detail << " lu output " << out;
      }
    }
  }
}

TEST(LinalgSolve, GradientsMatchFiniteDifferences) {
  for (DType dt : {DType::F64, DType::C128}) {
    const EagerTensor A = rt()->tensor(make({3, 3, 2}, dt, 0.6, true));
    const EagerTensor B = rt()->tensor(make({3, 2, 2}, dt, 1.1));
    const EagerTensor Br = rt()->tensor(make({2, 3, 2}, dt, 1.4));
    for (bool left : {true, false}) {
      auto r = check_gradients(
          [left](std::span<const EagerTensor> x) { return la::solve(x[0], x[1], left); },
          {A, left ? B : Br});
      EXPECT_TRUE(r.ok) << r.detail << " solve left=" << left;
      for (bool adjoint : {false, true}) {
        auto rs = check_gradients(
            [left, adjoint](std::span<const EagerTensor> x) {
              return la::lu_solve(x[0], la::lu_factor(x[2]).second, x[1], left, adjoint);
            },
            {rt()->tensor(la::lu_factor(A).first.value()), left ? B : Br, A});
        EXPECT_TRUE(rs.ok) << rs.detail << " lu_solve left=" << left << " adjoint=" << adjoint;
      }
    }
    auto ri = check_gradients([](std::span<const EagerTensor> x) { return la::inv(x[0]); }, {A});
    EXPECT_TRUE(ri.ok) << ri.detail << " inv";
    auto rv = check_gradients([](std::span<const EagerTensor> x) { return la::solve(x[0], x[1]); },
                              {A, rt()->tensor(make({3, 2}, dt, 0.5))});
    EXPECT_TRUE(rv.ok) << rv.detail << " solve with a batch of vectors";
  }
}

TEST(LinalgSolve, DirectEagerAndTracedAgree) {
  const Tensor A = make({3, 3, 2}, DType::F64, 0.8, true);
  const Tensor B = make({3, 2, 2}, DType::F64, 0.1);
  expect_tiers_agree(
      [](auto x) { return la::solve(x[0], x[1]); },
      [](const std::vector<Tensor>& x, Backend& be) { return la::solve(x[0], x[1], true, be); },
      {A, B});
  expect_tiers_agree([](auto x) { return la::inv(x[0]); },
                     [](const std::vector<Tensor>& x, Backend& be) { return la::inv(x[0], be); },
                     {make({4, 4}, DType::C128, 0.3, true)});
  expect_tiers_agree(
      [](auto x) { return std::get<1>(la::lu(x[0])); },
      [](const std::vector<Tensor>& x, Backend& be) { return std::get<1>(la::lu(x[0], true, be)); },
      {make({4, 3}, DType::F64, 0.3)});
  expect_tiers_agree(
      [](auto x) { return la::lu_factor(x[0]).first; },
      [](const std::vector<Tensor>& x, Backend& be) { return la::lu_factor(x[0], true, be).first; },
      {make({2, 4}, DType::C128, 0.7)});
}

TEST(LinalgSolve, BatchAxesBroadcastLikePyTorch) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = make({3, 3, 2, 1}, DType::F64, 0.3, true);
  const Tensor B = make({3, 2, 1, 4}, DType::F64, 0.6);
  const Tensor X = la::solve(A, B, true, cpu);
  ASSERT_EQ(X.shape(), (Shape{3, 2, 2, 4}));
  const Tensor Ab = A.broadcast_to({3, 3, 2, 4}), Bb = B.broadcast_to({3, 2, 2, 4});
  EXPECT_LT(product_error(Ab.contiguous(), X, Bb.contiguous()), 1e-11);
  // A missing trailing (PyTorch: leading) batch axis broadcasts; so does a vector.
  EXPECT_EQ(la::solve(A, make({3, 2, 2}, DType::F64, 1), true, cpu).shape(), (Shape{3, 2, 2, 1}));
  EXPECT_EQ(la::solve(A, make({3}, DType::F64, 1), true, cpu).shape(), (Shape{3, 2, 1}));
  auto [lu, piv] = la::lu_factor(make({3, 3}, DType::F64, 0.3, true), true, cpu);
  EXPECT_EQ(la::lu_solve(lu, piv, B, true, false, cpu).shape(), (Shape{3, 2, 1, 4}));
  EXPECT_TF_ERROR(
      la::solve(make({3, 3, 2}, DType::F64, 1, true), make({3, 1, 3}, DType::F64, 1), true, cpu),
      ErrorKind::ShapeMismatch);
  // Eager and traced broadcast the same, and the gradient sums over the broadcast.
  expect_tiers_agree(
      [](auto x) { return la::solve(x[0], x[1]); },
      [](const std::vector<Tensor>& x, Backend& be) { return la::solve(x[0], x[1], true, be); },
      {make({3, 3, 2}, DType::F64, 0.4, true), make({3, 1}, DType::F64, 0.2)});
  auto r = check_gradients([](std::span<const EagerTensor> x) { return la::solve(x[0], x[1]); },
                           {rt()->tensor(make({3, 3, 1}, DType::C128, 0.4, true)),
                            rt()->tensor(make({3, 2, 2}, DType::C128, 0.2))});
  EXPECT_TRUE(r.ok) << r.detail;
}

// lu_solve has no oracle cases (see docs/oracle-exceptions.md): its Hessian-vector
// products, forward over reverse and reverse over reverse, against central
// differences of its traced gradient, in LU and in B.
TEST(LinalgLuSolve, SecondOrderMatchesFiniteDifferences) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = make({3, 3}, DType::F64, 0.8, true);
  auto [lu0, piv0] = la::lu_factor(A, true, cpu);
  const Tensor B0 = make({3, 2}, DType::F64, 0.35), V = make({3, 3}, DType::F64, 1.9),
               W = make({3, 2}, DType::F64, 2.3);
  Runtime& r = *rt()->runtime();
  for (bool adjoint : {false, true}) {
    for (bool left : {true, false}) {
      const Tensor B = left ? B0 : B0.transpose(0, 1).contiguous();
      const Tensor Wb = left ? W : W.transpose(0, 1).contiguous();
      const TracedTensor lu = placeholder(DType::F64, {3, 3}), piv = placeholder(DType::I32, {3});
      const TracedTensor b = placeholder(DType::F64, SymShape(B.shape().begin(), B.shape().end()));
      const TracedTensor v = placeholder(DType::F64, {3, 3});
      const TracedTensor w = placeholder(DType::F64, SymShape(B.shape().begin(), B.shape().end()));
      const TracedTensor x = la::lu_solve(lu, piv, b, left, adjoint);
      const TracedTensor y = sum(x * x * x);
      const TracedTensor g_lu = grad(y, lu), g_b = grad(y, b);
      const TracedTensor outs[] = {g_lu,
                                   g_b,
                                   hvp(y, lu, v, HvpMode::ForwardOverReverse),
                                   hvp(y, lu, v, HvpMode::ReverseOverReverse),
                                   hvp(y, b, w, HvpMode::ForwardOverReverse),
                                   hvp(y, b, w, HvpMode::ReverseOverReverse)};
      const TracedTensor ins[] = {lu, piv, b, v, w};
      const Program p = compile(outs, ins);
      const double eps = 1e-6;
      auto at_point = [&](double s, double t) {
        const Tensor l = add(lu0, mul(V, Tensor::scalar(s), cpu), cpu);
        const Tensor bb = add(B, mul(Wb, Tensor::scalar(t), cpu), cpu);
        return run_compiled(r, p, {l, piv0, bb, V, Wb});
      };
      const auto o = at_point(0, 0);
      const auto lp = at_point(eps, 0), lm = at_point(-eps, 0);
      const auto bp = at_point(0, eps), bm = at_point(0, -eps);
      const Tensor fd_lu = mul(sub(lp[0], lm[0], cpu), Tensor::scalar(0.5 / eps), cpu);
      const Tensor fd_b = mul(sub(bp[1], bm[1], cpu), Tensor::scalar(0.5 / eps), cpu);
      EXPECT_GT(max_diff(o[2], zeros(o[2].shape())), 1e-2);  // not trivially zero
      EXPECT_GT(max_diff(o[4], zeros(o[4].shape())), 1e-2);
      EXPECT_LT(max_diff(o[2], fd_lu), 1e-5) << "left=" << left << " adjoint=" << adjoint;
      EXPECT_LT(max_diff(o[3], fd_lu), 1e-5) << "left=" << left << " adjoint=" << adjoint;
      EXPECT_LT(max_diff(o[4], fd_b), 1e-5) << "left=" << left << " adjoint=" << adjoint;
      EXPECT_LT(max_diff(o[5], fd_b), 1e-5) << "left=" << left << " adjoint=" << adjoint;
    }
  }
}

// Subnormal pivots (issue 52 item 9): OpenBLAS multiplies by a pivot's
// reciprocal, which overflows; balance.hpp scales such matrices by a power of
// two. A = diag(1e-310, 1e-310) is finite and non-singular.
TEST(LinalgLu, SubnormalPivotsGiveTheRightValues) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  const double t = 1e-310;
  const Tensor A = Tensor::from_col_major({2, 2}, std::vector<double>{t, 0, 0, t});
  const Tensor b = Tensor::from_col_major({2}, std::vector<double>{t, t});
  EXPECT_EQ(la::solve(A, b, true, cpu).to_vector<double>(), (std::vector<double>{1, 1}));
  const auto [lu, piv] = la::lu_factor(A, true, cpu);
  EXPECT_EQ(lu.to_vector<double>(), (std::vector<double>{t, 0, 0, t}));
  EXPECT_EQ(la::lu_solve(lu, piv, Tensor::from_col_major({2, 1}, std::vector<double>{2 * t, t}),
                         true, false, cpu)
                .to_vector<double>(),
            (std::vector<double>{2, 1}));
  EXPECT_EQ(la::det(A, cpu).to_vector<double>()[0], 0.0);  // 1e-620 underflows
  const auto [sign, logabs] = la::slogdet(A, cpu);
  EXPECT_EQ(sign.to_vector<double>()[0], 1.0);
  EXPECT_NEAR(logabs.to_vector<double>()[0], 2 * std::log(t), 1e-9);
  for (double v : la::inv(A, cpu).to_vector<double>()) EXPECT_FALSE(std::isnan(v));  // inf, 0
  // A general (non-diagonal) subnormal matrix in every dtype: X solves A X = B.
  for (const DType d : kAll) {
    const bool single = d == DType::F32 || d == DType::C64;
    const double s = single ? 1e-41 : 1e-315;
    const Tensor M = mul(make({3, 3}, d, 2, true), Tensor::scalar(s), cpu);
    const Tensor R = mul(make({3, 2}, d, 3), Tensor::scalar(s), cpu);
    const Tensor X = la::solve(M, R, true, cpu);
    const Tensor X1 = la::solve(make({3, 3}, d, 2, true), make({3, 2}, d, 3), true, cpu);
    // Subnormals carry few significant bits: compare with the unscaled solve.
    EXPECT_LT(max_diff(X, X1), single ? 0.05 : 1e-3) << name(d);
  }
}

// slogdet of a matrix whose LU overflows (issue 52 item 10): the sign is +-1
// and logabsdet finite; det overflows to inf with the right sign.
TEST(LinalgLu, SlogdetSignWhenTheFactorsWouldOverflow) {
  CpuBackend cpu(CpuBackendOptions{.num_threads = 1});
  // A = [[1e308, 1e308], [-1e308, 1e308]]: det = 2e616.
  const Tensor A = Tensor::from_col_major({2, 2}, std::vector<double>{1e308, -1e308, 1e308, 1e308});
  const auto [sign, logabs] = la::slogdet(A, cpu);
  EXPECT_EQ(sign.to_vector<double>()[0], 1.0);
  EXPECT_NEAR(logabs.to_vector<double>()[0], std::log(2.0) + 616 * std::log(10.0), 1e-9);
  EXPECT_EQ(la::det(A, cpu).to_vector<double>()[0], std::numeric_limits<double>::infinity());
  // Swapping the columns flips the sign.
  const Tensor B = Tensor::from_col_major({2, 2}, std::vector<double>{1e308, 1e308, 1e308, -1e308});
  EXPECT_EQ(la::slogdet(B, cpu).first.to_vector<double>()[0], -1.0);
  EXPECT_EQ(la::det(B, cpu).to_vector<double>()[0], -std::numeric_limits<double>::infinity());
  // Complex: a unit phase.
  const Tensor C = Tensor::from_col_major(
      {2, 2}, std::vector<cd>{{1e308, 1e308}, {-1e308, 0}, {1e308, 0}, {1e308, -1e308}});
  const cd sc = la::slogdet(C, cpu).first.to_vector<cd>()[0];
  EXPECT_NEAR(std::abs(sc), 1.0, 1e-12);
}

// Issue 52 item 14: a failure inside backward names what the user called and
// the op whose derivative failed, keeping the inner error as the cause.
TEST(LinalgLu, FailureInsideBackwardNamesTheCall) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const EagerTensor x =
      rt->variable(Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 2, 4}));
  const auto [lu, piv, info] = la::lu_factor_ex(x);  // singular: U[1, 1] = 0
  try {
    sum(lu).backward();
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(e.op(), "backward");
    EXPECT_EQ(e.kind(), ErrorKind::Singular);
    EXPECT_NE(e.message().find("lu_factor"), std::string::npos) << e.what();
    const Error* root = &e;
    while (root->cause() != nullptr) root = root->cause();
    EXPECT_EQ(root->op(), "solve_triangular") << e.what();
  }
  EXPECT_EQ(user_op_name("tenferro.linalg_lu_factor.v1"), "lu_factor");
  EXPECT_EQ(user_op_name("tenferro.einsum.v1"), "einsum");
  EXPECT_EQ(user_op_name("mylib.scale.v2"), "mylib.scale.v2");
}

TEST(LinalgLu, MatmulMismatchNamesTheShapesInEveryTier) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor a = make({2, 3}, DType::F64, 1), b = make({2, 3}, DType::F64, 2);
  const auto message = [](auto f) {
    try {
      f();
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::ShapeMismatch);
      return std::string(e.what());
    }
    return std::string("no error");
  };
  for (const std::string& m :
       {message([&] { (void)matmul(rt->tensor(a), rt->tensor(b)); }),
        message([&] { (void)matmul(a, b, rt->backend()); }), message([&] {
          (void)matmul(placeholder(DType::F64, {2, 3}), placeholder(DType::F64, {2, 3}));
        })}) {
    EXPECT_NE(m.find("[2, 3]"), std::string::npos) << m;
    EXPECT_EQ(m.rfind("[matmul]", 0), 0u) << m;
  }
}

// docs/errors.md, Phases: a numerical failure is found while running, in
// every tier, and names the function called.
TEST(LinalgLu, NumericalFailuresAreExecutePhaseInEveryTier) {
  auto rt = EagerRuntime::make_cpu(CpuBackendOptions{.num_threads = 1});
  const Tensor A = Tensor::from_col_major({2, 2}, std::vector<double>{1, 2, 2, 4});
  int checked = 0;
  const auto check = [&](auto f) {
    try {
      f();
      ADD_FAILURE() << "no error";
    } catch (const Error& e) {
      EXPECT_EQ(e.kind(), ErrorKind::Singular) << e.what();
      EXPECT_EQ(e.phase(), ErrorPhase::Execute) << e.what();
      EXPECT_EQ(e.op(), "inv") << e.what();
      ++checked;
    }
  };
  check([&] { (void)la::inv(A, rt->backend()); });
  check([&] { (void)la::inv(rt->tensor(A)); });
  const TracedTensor ta = placeholder(DType::F64, {2, 2});
  const TracedTensor tx = la::inv(ta);
  const Program p = compile(std::span<const TracedTensor>(&tx, 1), {ta});
  check([&] { (void)run_compiled(*rt->runtime(), p, {A}); });
  EXPECT_EQ(checked, 3);
}
