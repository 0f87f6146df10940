// One value row per elementwise op of backend/op_list.hpp (the rows live in
// conformance/value_rows.hpp): the test table of CONTRIBUTING.md's "Adding
// an operator". Every descriptor must have a row
// (a new op without one fails here), and each row checks values at a few
// points with known results through the generic entry point and the result
// dtype its descriptor promises, on every backend of the conformance suite
// (conformance/backends.hpp), in the direct, eager and traced tiers. The
// families' own tests (elementwise_*, special_test) cover layouts, dtypes
// and edge cases in depth.

#include <cmath>
#include <complex>
#include <limits>
#include <map>
#include <numbers>
#include <string>
#include <vector>

#include "conformance/backends.hpp"
#include "conformance/value_rows.hpp"
#include "tenferro/backend/reduce.hpp"
#include "test_util.hpp"

using namespace tenferro;
using tftest::binary_rows;
using tftest::CaseCount;
using tftest::ConformanceBackend;
using tftest::Row;
using tftest::unary_rows;

namespace {

constexpr double e = std::numbers::e;

Tensor vec(const std::vector<double>& v) {
  return Tensor::from_col_major({static_cast<std::int64_t>(v.size())}, v);
}

void expect_row(const std::string& what, const Tensor& result, const Row& row, Backend& backend) {
  const Tensor got = to_host(result, backend);
  Tensor c = zeros(got.shape(), c128);
  Tensor::copy_into(got, c);
  const auto g = c.to_vector<c128_t>();
  ASSERT_EQ(g.size(), row.want.size()) << what;
  for (std::size_t i = 0; i < g.size(); ++i) {
    const c128_t w = row.want[i];
    const bool ok = std::isnan(w.real()) ? std::isnan(g[i].real())
                                         : std::abs(g[i] - w) <= 1e-14 * (1 + std::abs(w));
    EXPECT_TRUE(ok) << what << " at " << i << ": got " << g[i] << " want " << w;
  }
}

// Every op of a descriptor table has a row in `rows`, and each row exists
// for an op; check(op, name, row) runs the row.
template <class Op, class Rows, class Check>
void for_every_descriptor(const char* kind, std::size_t count, const Rows& rows, Check check) {
  std::size_t checked = 0;
  for (std::size_t i = 0; i < count; ++i) {
    const auto op = static_cast<Op>(i);
    const std::string nm(descriptor(op).name);
    const auto it = rows.find(nm);
    if (it == rows.end()) {
      ADD_FAILURE() << kind << " '" << nm
                    << "' has no value row in tests/conformance/value_rows.hpp";
      continue;
    }
    check(op, nm, it->second);
    ++checked;
  }
  EXPECT_EQ(checked, rows.size());  // no row for an op that does not exist
}

}  // namespace

class OpValues : public testing::TestWithParam<ConformanceBackend> {};

// A partial backend runs the rows of the ops it has kernels for; a complete
// one every row.
void expect_count(const ConformanceBackend& b, const CaseCount& count, std::size_t rows) {
  EXPECT_EQ(static_cast<std::size_t>(count.ran + count.lacked_kernel), rows) << b.name;
  EXPECT_GT(count.ran, 0) << b.name;
  if (b.name == "cpu") {
    EXPECT_EQ(count.lacked_kernel, 0);
  }
}

TEST_P(OpValues, EveryUnaryDescriptorHasARowAndMatchesIt) {
  const ConformanceBackend& b = GetParam();
  const auto backend = b.make();
  const auto rt = EagerRuntime::make(backend);
  CaseCount count;
  for_every_descriptor<UnaryOp>(
      "unary op", kUnaryOpCount, unary_rows(),
      [&](UnaryOp op, const std::string& nm, const Row& row) {
        EXPECT_EQ(unary_op_named(nm), op) << nm;
        tftest::run_case(b, nm, count, [&] {
          const Tensor x = from_host(vec(row.a), *backend);
          const Tensor y = unary(op, x, *backend);
          EXPECT_EQ(y.dtype(), unary_result_dtype(op, f64)) << nm;
          expect_row(nm, y, row, *backend);
          expect_row(nm + " (eager)", unary(op, rt->tensor(x)).value(), row, *backend);
          const TracedTensor t = placeholder(f64, {static_cast<std::int64_t>(row.a.size())});
          expect_row(nm + " (traced)",
                     run_compiled(*rt->runtime(), compile({unary(op, t)}, {t}), {x})[0], row,
                     *backend);
        });
      });
  EXPECT_EQ(unary_op_named("no_such_op"), std::nullopt);
  expect_count(b, count, unary_rows().size());
}

TEST_P(OpValues, EveryBinaryDescriptorHasARowAndMatchesIt) {
  const ConformanceBackend& b = GetParam();
  const auto backend = b.make();
  const auto rt = EagerRuntime::make(backend);
  CaseCount count;
  for_every_descriptor<BinaryOp>(
      "binary op", kBinaryOpCount, binary_rows(),
      [&](BinaryOp op, const std::string& nm, const Row& row) {
        EXPECT_EQ(binary_op_named(nm), op) << nm;
        tftest::run_case(b, nm, count, [&] {
          const Tensor x = from_host(vec(row.a), *backend), y = from_host(vec(row.b), *backend);
          const Tensor z = binary(op, x, y, *backend);
          EXPECT_EQ(z.dtype(), binary_result_dtype(op, f64, f64)) << nm;
          expect_row(nm, z, row, *backend);
          expect_row(nm + " (eager)", binary(op, rt->tensor(x), rt->tensor(y)).value(), row,
                     *backend);
          const TracedTensor tx = placeholder(f64, {static_cast<std::int64_t>(row.a.size())});
          const TracedTensor ty = placeholder(f64, {static_cast<std::int64_t>(row.b.size())});
          expect_row(
              nm + " (traced)",
              run_compiled(*rt->runtime(), compile({binary(op, tx, ty)}, {tx, ty}), {x, y})[0], row,
              *backend);
        });
      });
  EXPECT_EQ(binary_op_named("no_such_op"), std::nullopt);
  expect_count(b, count, binary_rows().size());
}

TEST(OpValues, DescriptorsDriveTheDTypeRulesAndMessages) {
  // A refused dtype is DTypeMismatch whose message carries the descriptor's
  // advice; an accepted one follows the compute and result rules.
  for (int i = 0; i < kUnaryOpCount; ++i) {
    const auto op = static_cast<UnaryOp>(i);
    const ElementwiseDescriptor& d = descriptor(op);
    if (d.complex_advice.empty()) {
      EXPECT_NO_THROW(unary_result_dtype(op, c128)) << d.name;
    } else {
      try {
        unary_result_dtype(op, c128);
        ADD_FAILURE() << d.name << " accepted c128";
      } catch (const Error& err) {
        EXPECT_EQ(err.kind(), ErrorKind::DTypeMismatch) << d.name;
        EXPECT_NE(std::string(err.what()).find(d.complex_advice), std::string::npos) << d.name;
      }
    }
    if (d.bool_advice.empty()) {
      const DType r = unary_result_dtype(op, bool_);
      if (d.compute == ComputeRule::Inexact) {
        EXPECT_TRUE(is_inexact(r) || r == i32) << d.name;
      }
    } else {
      EXPECT_TF_ERROR(unary_result_dtype(op, bool_), ErrorKind::DTypeMismatch);
    }
  }
  for (int i = 0; i < kBinaryOpCount; ++i) {
    const auto op = static_cast<BinaryOp>(i);
    const ElementwiseDescriptor& d = descriptor(op);
    if (!d.complex_advice.empty()) {
      EXPECT_TF_ERROR(binary_result_dtype(op, c128, f64), ErrorKind::DTypeMismatch);
    }
    if (!d.bool_advice.empty()) {
      EXPECT_TF_ERROR(binary_result_dtype(op, bool_, bool_), ErrorKind::DTypeMismatch);
    }
    if (d.result == ResultRule::Bool) {
      EXPECT_EQ(binary_result_dtype(op, f32, f32), bool_) << d.name;
    }
  }
}

TEST_P(OpValues, EveryReductionDescriptorHasARowAndMatchesIt) {
  // The reduction of {1, 2, 0.5} (and, for all/any, of {1, 0, 2}).
  const std::map<std::string, double, std::less<>> rows = {
      {"sum", 3.5},      {"prod", 1.0},
      {"mean", 3.5 / 3}, {"max", 2.0},
      {"min", 0.5},      {"all", 0.0},
      {"any", 1.0},      {"logsumexp", std::log(e + e * e + std::exp(0.5))},
  };
  const ConformanceBackend& b = GetParam();
  const auto backend = b.make();
  CaseCount count;
  for_every_descriptor<ReduceOp>(
      "reduction", std::size(kReduceOps), rows,
      [&](ReduceOp op, const std::string& nm, double want) {
        EXPECT_EQ(name(op), nm);
        const bool logical = descriptor(op).result == ReduceResult::Bool;
        tftest::run_case(b, nm, count, [&] {
          const Tensor x = from_host(logical ? vec({1, 0, 2}) : vec({1, 2, 0.5}), *backend);
          const Tensor y = to_host(reduce(op, x, std::vector<std::int64_t>{0}, *backend), *backend);
          EXPECT_EQ(y.dtype(), reduce_result_dtype(op, f64)) << nm;
          Tensor c = zeros(y.shape(), f64);
          Tensor::copy_into(y, c);
          EXPECT_NEAR(c.item<double>(), want, 1e-14) << nm;
        });
        // The traced tier's inference reads the same rule.
        const ReduceResult r = descriptor(op).result;
        EXPECT_EQ(reduce_result_dtype(op, i32), r == ReduceResult::Accumulate ? i64
                                                : r == ReduceResult::Inexact  ? f64
                                                : r == ReduceResult::Bool     ? bool_
                                                                              : i32)
            << nm;
      });
  EXPECT_TF_ERROR(reduce_result_dtype(ReduceOp::Max, c128), ErrorKind::DTypeMismatch);
  EXPECT_EQ(variance_result_dtype(c64), f32);
  expect_count(b, count, rows.size());
}

INSTANTIATE_TEST_SUITE_P(Backends, OpValues, testing::ValuesIn(tftest::conformance_backends()),
                         tftest::backend_name);
