// The linear systems of a fixed point's derivatives (fixed_point_rules.hpp):
// which solver serves them, and the direct one. The direct solve builds the
// linearised map as a dense matrix (one jvp or vjp of f per unknown) and
// eliminates with traced ops, so its result is differentiable again.

#include <optional>

#include "ad/program/graph.hpp"
#include "ad/traced/body_trace.hpp"
#include "ad/traced/fixed_point_rules.hpp"
#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/ops_layout.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro::detail {

namespace {

using Traced = std::vector<TracedTensor>;

/// Where each state tensor's real unknowns sit in the dense system: its
/// elements, a complex one as two (the real parts, then the imaginary ones).
struct Unknowns {
  std::vector<std::int64_t> offset;    ///< per state: its first unknown
  std::vector<std::int64_t> elements;  ///< per state: its element count
  std::int64_t count = 0;
  DType dtype = DType::F32;  ///< the matrix's: f64 when any state is (c)f64
};

/// nullopt when an extent is symbolic.
std::optional<Unknowns> unknowns_of(std::span<const TensorMeta> states) {
  Unknowns u;
  for (const TensorMeta& m : states) {
    std::int64_t n = 1;
    for (const SymDim& d : m.shape) {
      const auto c = d.try_constant();
      if (!c) return std::nullopt;
      n *= *c;
    }
    u.offset.push_back(u.count);
    u.elements.push_back(n);
    u.count += is_complex(m.dtype) ? 2 * n : n;
    if (real_dtype(m.dtype) == DType::F64) u.dtype = DType::F64;
  }
  return u;
}

/// The state tensors as one column of real unknowns.
TracedTensor to_column(std::span<const TracedTensor> values, const Unknowns& u) {
  Traced parts;
  for (std::size_t k = 0; k < values.size(); ++k) {
    const TracedTensor flat = reshape(values[k], {u.elements[k], std::int64_t{1}});
    if (is_complex(flat.dtype())) {
      parts.push_back(convert(real(flat), u.dtype));
      parts.push_back(convert(imag(flat), u.dtype));
    } else {
      parts.push_back(convert(flat, u.dtype));
    }
  }
  return parts.size() == 1 ? parts[0] : concatenate(parts, 0);
}

/// The inverse of to_column.
Traced from_column(const TracedTensor& column, std::span<const TensorMeta> states,
                   const Unknowns& u) {
  Traced r;
  for (std::size_t k = 0; k < states.size(); ++k) {
    const std::int64_t first = u.offset[k], n = u.elements[k];
    const DType part = real_dtype(states[k].dtype);
    auto piece = [&](std::int64_t start) {
      return convert(slice(column, {start, 0}, {start + n, 1}), part);
    };
    const TracedTensor flat =
        is_complex(states[k].dtype) ? complex(piece(first), piece(first + n)) : piece(first);
    r.push_back(reshape(flat, states[k].shape));
  }
  return r;
}

/// x with a x = b (a [n, n], b [n, 1]) by Gauss-Jordan elimination with
/// partial pivoting. Each pivot row is picked by argmax and applied as a
/// one-hot row, so no value passes through an index: the result is
/// differentiable in a and b (the picks are constants for AD).
TracedTensor gauss_jordan(TracedTensor a, TracedTensor b) {
  const std::int64_t n = *a.shape()[0].try_constant();
  std::vector<std::int64_t> index(static_cast<std::size_t>(n));
  for (std::int64_t i = 0; i < n; ++i) index[static_cast<std::size_t>(i)] = i;
  const TracedTensor rows = constant(Tensor::from_col_major(Shape{n, 1}, index));
  TracedTensor used = traced_full(b.shape(), Scalar(0.0), b.dtype());
  Traced picks;
  for (std::int64_t k = 0; k < n; ++k) {
    const TracedTensor col = slice(a, {0, k}, {n, k + 1});
    // A row already used scores -1, below any candidate.
    const TracedTensor score = abs(col) * (1.0 - used) - used;
    const TracedTensor pick = convert(eq(rows, argmax(score, 0, true)), a.dtype());
    const TracedTensor pick_row = transpose(pick);
    const TracedTensor pivot_a = matmul(pick_row, a);
    const TracedTensor pivot = slice(pivot_a, {0, k}, {1, k + 1});
    // Row p becomes the pivot row over its pivot; the others lose column k.
    const TracedTensor factor = col - pick;
    a = a - matmul(factor, pivot_a / pivot);
    b = b - matmul(factor, matmul(pick_row, b) / pivot);
    used = used + pick;
    picks.push_back(pick);
  }
  // a is now the permutation P with P[p_k, k] = 1, so x = P^T b.
  return matmul(transpose(concatenate(picks, 1)), b);
}

}  // namespace

bool solves_directly(const FixedPointOptions& options, std::span<const TensorMeta> states) {
  const char* op = "fixed_point";
  switch (options.linear_solver) {
    case FixedPointLinearSolver::Iterate:
      return false;
    case FixedPointLinearSolver::Auto: {
      const auto u = unknowns_of(states);
      return u && u->count <= kFixedPointDirectAuto;
    }
    case FixedPointLinearSolver::Direct: {
      const auto u = unknowns_of(states);
      if (!u) {
        fail(ErrorKind::InvalidArgument, op,
             "linear_solver = Direct needs constant state extents (it builds df/dx as a "
             "matrix); use Iterate or Auto for symbolic ones");
      }
      if (u->count > kFixedPointDirectMax) {
        fail(ErrorKind::InvalidArgument, op, "linear_solver = Direct takes at most ",
             kFixedPointDirectMax, " unknowns (a complex element counts two), the state has ",
             u->count, "; use Iterate");
      }
      return true;
    }
  }
  fail(ErrorKind::InvalidArgument, op, "linear_solver ", static_cast<int>(options.linear_solver),
       " is none of Iterate, Direct, Auto");
}

std::vector<TracedTensor> solve_directly(const Program& f, std::span<const TracedTensor> xs,
                                         std::span<const TracedTensor> ps,
                                         std::span<const TracedTensor> rhs, bool adjoint,
                                         const ad::AdContext& rules) {
  const std::size_t m = xs.size();
  const std::size_t np = ps.size();
  const std::vector<TensorMeta> states = metas_of(xs);
  const Unknowns u = *unknowns_of(states);
  Traced region(xs.begin(), xs.end());
  region.insert(region.end(), ps.begin(), ps.end());
  region.insert(region.end(), rhs.begin(), rhs.end());
  // A region over (x*, p, rhs): x* is a placeholder inside, so differentiating
  // f there does not reach back through the fixed point.
  return checkpoint(
      [&](std::span<const TracedTensor> r) {
        const std::span<const TracedTensor> x = r.first(m);
        const Traced fx = instantiate(*f.graph(), r.first(m + np), &f.constants());
        std::vector<double> eye(static_cast<std::size_t>(u.count * u.count), 0.0);
        for (std::int64_t i = 0; i < u.count; ++i)
          eye[static_cast<std::size_t>(i * (u.count + 1))] = 1;
        const TracedTensor id =
            convert(constant(Tensor::from_col_major(Shape{u.count, u.count}, eye)), u.dtype);
        // Column i of the map's matrix: the map applied to unknown i's unit vector.
        Traced columns;
        for (std::int64_t i = 0; i < u.count; ++i) {
          const Traced unit = from_column(slice(id, {0, i}, {u.count, i + 1}), states, u);
          const std::vector<std::optional<TracedTensor>> image =
              adjoint ? vjp_many(fx, unit, x, rules) : jvp_many(fx, x, unit, rules);
          Traced image_or_zero;
          for (std::size_t k = 0; k < m; ++k) {
            image_or_zero.push_back(
                image[k] ? *image[k] : traced_full(x[k].shape(), Scalar(0.0), x[k].dtype()));
          }
          columns.push_back(to_column(image_or_zero, u));
        }
        const TracedTensor map = columns.size() == 1 ? columns[0] : concatenate(columns, 1);
        return from_column(gauss_jordan(id - map, to_column(r.subspan(m + np), u)), states, u);
      },
      region);
}

}  // namespace tenferro::detail
