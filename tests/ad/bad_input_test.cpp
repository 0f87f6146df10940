// The bad-input table (issue 19): every public op called wrongly, each row
// written once and run in the direct, eager and traced tiers. A row asserts
// the ErrorKind (one rule, one kind, in every tier) and that the message
// names the op, or, for zero-size and rank-0 inputs where the op is defined,
// the result. After every call the tier still computes and the inputs are
// unchanged. The rows live in bad_input_rows_*.hpp; the machinery in
// bad_input_harness.hpp.

#include <cstdio>

#include "ad/bad_input_harness.hpp"
#include "ad/bad_input_rows_core.hpp"
#include "ad/bad_input_rows_families.hpp"
#include "ad/bad_input_rows_single.hpp"
#include "ad/bad_input_rows_structural.hpp"

namespace badinput {

bool tier_still_works(Env& env, int tier) {
  const Tensor one = ones({3});
  if (tier == 0) return sum(add(one, one, *env.cpu), *env.cpu).item<double>() == 6.0;
  if (tier == 1) return sum(env.eager->tensor(one) * 2.0).item<double>() == 6.0;
  const TracedTensor p = placeholder(f64, {3});
  const Program prog = compile({sum(p * 2.0)}, {p});
  Runtime& rt = *env.eager->runtime();
  return run(rt, prepare(rt, prog, InputSignature::of({&one, 1})), {one})[0].item<double>() == 6.0;
}

namespace {

std::string describe(const Outcome& o) {
  switch (o.state) {
    case Outcome::Value: {
      std::string s = "value";
      if (!o.outputs.empty()) {
        s += " of shape [";
        for (auto e : o.outputs[0].shape()) s += std::to_string(e) + ",";
        s += "] ";
        s += std::string(name(o.outputs[0].dtype()));
      }
      return s;
    }
    case Outcome::TypedError:
      return std::string(name(o.kind)) + ": " + o.what;
    case Outcome::Skipped:
      return "not in this tier";
    case Outcome::OtherException:
      return "non-tenferro exception: " + o.what;
  }
  return "?";
}

// Whether the message names one of the row's ops ("flip|reverse": flip
// is reverse under PyTorch's name, and some tiers name the primitive).
bool names_op(const std::string& what, const std::string& names) {
  const std::string head = what.substr(0, what.find(']') + 1);
  std::size_t start = 0;
  while (start <= names.size()) {
    const std::size_t bar = std::min(names.find('|', start), names.size());
    const std::string name = names.substr(start, bar - start);
    // In the head, or as the op of a cause ("caused by: [inv] the matrix is
    // singular" under the family's "[tenferro.linalg_lu_factor.v1] executing ...").
    if (head.find(name) != std::string::npos) return true;
    if (what.find("[" + name + "]") != std::string::npos) return true;
    start = bar + 1;
  }
  return false;
}

// The row's verdict on one tier's outcome; empty when it matches.
std::string judge(const Row& row, const Outcome& o) {
  const Expect& e = row.expect;
  if (o.state == Outcome::OtherException) return describe(o);
  if (e.kind) {
    if (o.state != Outcome::TypedError)
      return "expected " + std::string(name(*e.kind)) + ", got " + describe(o);
    if (o.kind != *e.kind) return "expected " + std::string(name(*e.kind)) + ", got " + describe(o);
    if (o.what.rfind("[", 0) != 0) return "message does not start with [op]: " + o.what;
    if (!names_op(o.what, row.op)) return "message does not name '" + row.op + "': " + o.what;
    return {};
  }
  if (o.state != Outcome::Value) return "expected a value, got " + describe(o);
  if (o.outputs.empty()) return {};
  const Tensor& y = o.outputs[0];
  if (y.shape() != e.shape) return "wrong result: " + describe(o);
  if (e.dtype && y.dtype() != *e.dtype) return "wrong result dtype: " + describe(o);
  if (!e.values.empty()) {
    const std::vector<double> got =
        cast(y, f64, *std::make_shared<CpuBackend>()).to_vector<double>();
    if (got != e.values) return "wrong values";
  }
  return {};
}

}  // namespace

std::map<std::string, int> run_rows(Env& env, const std::vector<Row>& rows) {
  std::map<std::string, int> per_cat;
  for (const Row& row : rows) {
    std::vector<std::vector<unsigned char>> before;
    for (const Tensor& x : row.inputs) before.push_back(bytes_of(x));
    Outcome out[3];
    int ran = 0;
    std::string problems;
    for (int tier = 0; tier < 3; ++tier) {
      if (!row.tiers[tier]) continue;
      out[tier] = row.tiers[tier](env, row.inputs);
      if (out[tier].state == Outcome::Skipped) continue;
      ++ran;
      const std::string verdict = judge(row, out[tier]);
      if (!verdict.empty()) problems += std::string("\n  ") + kTierNames[tier] + ": " + verdict;
      if (!tier_still_works(env, tier))
        problems += std::string("\n  ") + kTierNames[tier] + ": unusable afterwards";
    }
    for (std::size_t i = 0; i < row.inputs.size(); ++i)
      if (bytes_of(row.inputs[i]) != before[i])
        problems += "\n  input " + std::to_string(i) + " changed";
    if (ran == 0) problems += "\n  ran in no tier";
    if (!problems.empty())
      ADD_FAILURE() << "row " << row.name << " (" << cat_name(row.cat) << ")" << problems;
    ++per_cat[cat_name(row.cat)];
  }
  return per_cat;
}

}  // namespace badinput

using namespace badinput;

TEST(BadInput, EveryRowInEveryTier) {
  Env env;
  std::vector<Row> rows;
  add_core_rows(rows);
  add_structural_rows(rows);
  add_family_rows(rows);
  add_single_rows(rows);
  const auto per_cat = run_rows(env, rows);
  int total = 0;
  for (const auto& [cat, n] : per_cat) {
    std::printf("bad-input rows, %-18s %4d\n", cat.c_str(), n);
    total += n;
  }
  std::printf("bad-input rows, %-18s %4d\n", "total", total);
  // Rows cannot vanish silently: these floors are below the table's size.
  EXPECT_GE(total, kMinimumRows);
  for (const auto& [cat, floor] : kMinimumPerCategory)
    EXPECT_GE(per_cat.count(cat) ? per_cat.at(cat) : 0, floor) << cat;
}
