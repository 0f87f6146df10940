// Unit tests of the oracle replay: loading (row-major -> column-major, PyTorch
// dims, non-finite literals), classification, and the checks on synthetic cases
// whose references are computed here by hand.

#include <gtest/gtest.h>

#include <algorithm>
#include <complex>

#include "case.hpp"
#include "checks.hpp"
#include "ops.hpp"

namespace {

using replay::Json;
using namespace tenferro;

Json tensor_json(std::vector<std::int64_t> shape, std::vector<double> data) {
  return {{"dtype", "float64"}, {"order", "row_major"}, {"shape", shape}, {"data", data}};
}

// mul(a, b) with a: [2, 3] and b: [3] (PyTorch broadcasting over rows).
// Row-major element (i, j) is a[i][j]; out = a * b[j].
Json mul_case() {
  const std::vector<double> a = {1, 2, 3, 4, 5, 6}, b = {7, 8, 9};
  const std::vector<double> da = {0.5, -1, 2, 0.25, 3, -2}, db = {1, -1, 2};
  const std::vector<double> ct = {1, 2, -1, 0.5, 1, 3};
  std::vector<double> jvp(6), vjp_a(6), vjp_b(3, 0.0), hvp_a(6), hvp_b(3, 0.0);
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 3; ++j) {
      const int k = 3 * i + j;
      jvp[k] = da[k] * b[j] + a[k] * db[j];
      vjp_a[k] = ct[k] * b[j];
      vjp_b[j] += ct[k] * a[k];
      hvp_a[k] = ct[k] * db[j];  // H of <ct, a*b> couples a and b only
      hvp_b[j] += ct[k] * da[k];
    }
  }
  Json c;
  c["case_id"] = "mul_synthetic_001";
  c["op"] = "mul";
  c["family"] = "identity";
  c["dtype"] = "float64";
  c["expected_behavior"] = "success";
  c["observable"] = {{"kind", "identity"}};
  c["comparison"] = {{"first_order", {{"atol", 1e-12}, {"rtol", 1e-12}}},
                     {"second_order", {{"atol", 1e-12}, {"rtol", 1e-12}}}};
  c["inputs"] = {{"a", tensor_json({2, 3}, a)}, {"b", tensor_json({3}, b)}};
  Json probe;
  probe["probe_id"] = "p0";
  probe["direction"] = {{"a", tensor_json({2, 3}, da)}, {"b", tensor_json({3}, db)}};
  probe["cotangent"] = {{"value", tensor_json({2, 3}, ct)}};
  probe["pytorch_ref"] = {
      {"jvp", {{"value", tensor_json({2, 3}, jvp)}}},
      {"vjp", {{"a", tensor_json({2, 3}, vjp_a)}, {"b", tensor_json({3}, vjp_b)}}},
      {"hvp", {{"a", tensor_json({2, 3}, hvp_a)}, {"b", tensor_json({3}, hvp_b)}}}};
  c["probes"] = Json::array({probe});
  return c;
}

TEST(OracleReplay, RowMajorDataLoadsAsReversedColumnMajorShape) {
  const Tensor t = replay::tensor_from_json(tensor_json({2, 3}, {1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(t.shape(), (Shape{3, 2}));
  // Row-major (i, j) = 3i + j + 1 is column-major (j, i).
  const std::vector<double> v = t.to_vector<double>();
  EXPECT_EQ(v, (std::vector<double>{1, 2, 3, 4, 5, 6}));
  EXPECT_EQ(replay::dim_to_axis(0, 2), 1);
  EXPECT_EQ(replay::dim_to_axis(-1, 2), 0);
  EXPECT_EQ(replay::dim_to_axis(2, 4), 1);
  EXPECT_EQ(replay::dim_to_axis(0, 0), 0);
  EXPECT_THROW(replay::dim_to_axis(3, 3), std::runtime_error);
}

TEST(OracleReplay, ComplexPairsAndNonFiniteLiterals) {
  const std::string line =
      R"({"case_id": "x_NaN_1", "op": "nansum", "op_args": [Infinity], "inputs": {"a": )"
      R"({"dtype": "float64", "order": "row_major", "shape": [3], "data": [NaN, -Infinity, 1.5]},)"
      R"( "z": {"dtype": "complex128", "order": "row_major", "shape": [1], "data": [[1.0, -2.0]]}},)"
      R"( "probes": []})";
  const replay::Case c = replay::parse_case(line);
  EXPECT_EQ(c.case_id, "x_NaN_1");  // strings keep their text
  ASSERT_EQ(c.inputs.size(), 2u);
  const std::vector<double> a = c.inputs[0].second.to_vector<double>();
  EXPECT_TRUE(std::isnan(a[0]));
  EXPECT_EQ(a[1], -std::numeric_limits<double>::infinity());
  EXPECT_EQ(a[2], 1.5);
  EXPECT_EQ(c.inputs[1].second.to_vector<std::complex<double>>()[0], std::complex<double>(1, -2));
  EXPECT_EQ(replay::json_number(c.args[0]), std::numeric_limits<double>::infinity());
  EXPECT_THROW(replay::parse_case("{\"op\": 1}"), std::exception);
}

TEST(OracleReplay, ClassifiesLinalgExceptionsAndUnknownOps) {
  replay::Case c = replay::parse_case(mul_case().dump());
  EXPECT_EQ(replay::classify(c).support, replay::Support::Ok);
  c.op = "pinv_singular";  // a linalg op without a mapping (svd has one now)
  EXPECT_EQ(replay::classify(c).support, replay::Support::Linalg);
  c.op = "no_such_op";
  EXPECT_EQ(replay::classify(c).support, replay::Support::Unknown);
  c.op = "nn_functional_rrelu";
  c.kwargs = {{"training", true}};
  EXPECT_EQ(replay::classify(c).support, replay::Support::Exception);
  c.kwargs = {{"training", false}};
  EXPECT_EQ(replay::classify(c).support, replay::Support::Ok);
}

TEST(OracleReplay, HandComputedCasePassesInBothModes) {
  const replay::Case c = replay::parse_case(mul_case().dump());
  auto rt = EagerRuntime::make_cpu({.num_threads = 1});
  const replay::ModeResult e = replay::check_eager(c, rt);
  const replay::ModeResult t = replay::check_traced(c, rt);
  EXPECT_TRUE(e.failures.empty()) << e.failures.front().check;
  EXPECT_TRUE(t.failures.empty()) << t.failures.front().check;
  EXPECT_EQ(e.checks, 5);  // jvp, vjp a/b, hvp a/b
  EXPECT_EQ(t.checks, 5);
}

TEST(OracleReplay, WrongReferencesAreReportedPerCheck) {
  Json j = mul_case();
  j["probes"][0]["pytorch_ref"]["vjp"]["b"]["data"][1] = 1000.0;
  j["probes"][0]["pytorch_ref"]["hvp"]["a"]["shape"] = {3, 2};  // transposed shape
  const replay::Case c = replay::parse_case(j.dump());
  auto rt = EagerRuntime::make_cpu({.num_threads = 1});
  for (const replay::ModeResult& r : {replay::check_eager(c, rt), replay::check_traced(c, rt)}) {
    ASSERT_EQ(r.failures.size(), 2u);
    EXPECT_EQ(r.failures[0].check, "vjp:b");
    EXPECT_GT(r.failures[0].max_abs, 900.0);
    EXPECT_EQ(r.failures[1].check, "hvp:a");
    EXPECT_NE(r.failures[1].note.find("shape"), std::string::npos);
  }
}

// lu_solve(LU, pivots, B) with LU = diag(2, 4) (L = I, U = diag(2, 4)),
// identity pivots [1, 2] (int32, not differentiated) and B = [1, 2]^T: X =
// [0.5, 0.5]^T. Direction dLU = diag(1, 0): dA = diag(1, 0), dX = -A^-1 dA X.
// Cotangent [1, 1]: lambda = A^-H ct = [0.5, 0.25], grad B = lambda,
// grad A = -lambda X^T; grad LU = triu(grad A) + strict tril(grad A U^H).
Json lu_solve_case() {
  Json c;
  c["case_id"] = "lu_solve_synthetic_001";
  c["op"] = "lu_solve";
  c["dtype"] = "float64";
  c["comparison"] = {{"first_order", {{"atol", 1e-12}, {"rtol", 1e-12}}}};
  c["op_kwargs"] = {{"left", true}, {"adjoint", false}};
  c["inputs"] = {
      {"a", tensor_json({2, 2}, {2, 0, 0, 4})},
      {"pivots", {{"dtype", "int32"}, {"order", "row_major"}, {"shape", {2}}, {"data", {1, 2}}}},
      {"b", tensor_json({2, 1}, {1, 2})}};
  Json probe;
  probe["probe_id"] = "p0";
  probe["direction"] = {{"a", tensor_json({2, 2}, {1, 0, 0, 0})},
                        {"b", tensor_json({2, 1}, {0, 0})}};
  probe["cotangent"] = {{"value", tensor_json({2, 1}, {1, 1})}};
  probe["pytorch_ref"] = {{"jvp", {{"value", tensor_json({2, 1}, {-0.25, 0})}}},
                          {"vjp",
                           {{"a", tensor_json({2, 2}, {-0.25, -0.25, -0.25, -0.125})},
                            {"b", tensor_json({2, 1}, {0.5, 0.25})}}}};
  c["probes"] = Json::array({probe});
  return c;
}

TEST(OracleReplay, LuSolveWithPivotsIsMappedAndPivotsAreConstants) {
  const replay::Case c = replay::parse_case(lu_solve_case().dump());
  ASSERT_EQ(c.inputs.size(), 3u);
  EXPECT_EQ(c.inputs[1].second.dtype(), DType::I32);
  EXPECT_EQ(c.inputs[1].second.to_vector<std::int32_t>(), (std::vector<std::int32_t>{1, 2}));
  EXPECT_EQ(replay::classify(c).support, replay::Support::Ok);
  auto rt = EagerRuntime::make_cpu({.num_threads = 1});
  for (const replay::ModeResult& r : {replay::check_eager(c, rt), replay::check_traced(c, rt)}) {
    EXPECT_TRUE(r.failures.empty()) << r.failures.front().check;
    EXPECT_EQ(r.checks, 3);  // jvp, vjp a, vjp b: none for the pivots
  }
  // Without the pivots the case stays a documented exception.
  Json j = lu_solve_case();
  j["inputs"].erase("pivots");
  EXPECT_EQ(replay::classify(replay::parse_case(j.dump())).support, replay::Support::Exception);
}

TEST(OracleReplay, EveryTorchFftTransformIsMapped) {
  const std::vector<std::string> names = replay::fft_names();
  for (const char* n :
       {"fft", "ifft", "rfft", "irfft", "hfft", "ihfft", "fft2", "ifft2", "rfft2", "irfft2",
        "hfft2", "ihfft2", "fftn", "ifftn", "rfftn", "irfftn", "hfftn", "ihfftn"}) {
    const std::string op = std::string("fft_") + n;
    EXPECT_NE(std::find(names.begin(), names.end(), op), names.end()) << op;
    replay::Case c = replay::parse_case(mul_case().dump());
    c.op = op;
    c.inputs.resize(1);
    EXPECT_TRUE(static_cast<bool>(replay::build_fft<EagerTensor>(c))) << op;
    EXPECT_TRUE(static_cast<bool>(replay::build_fft<TracedTensor>(c))) << op;
  }
  EXPECT_EQ(names.size(), 18u);
}

}  // namespace
