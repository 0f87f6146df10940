// The contraction primitive (dot_general): inference, and execution as a plan
// that views each operand as a BLAS matrix per batch element (folding
// transposes into GEMM flags) and copies an operand only when its strides
// cannot be read that way. matmul is a composite of it (tenferro/ad/ops.hpp).

#include "ops/infer_context.hpp"
#include "ops/operands.hpp"

#include <algorithm>
#include <cstdlib>
#include <numeric>
#include <optional>

#include "tensor/small_sort.hpp"

namespace tenferro {

using prim::Operands;

namespace {

constexpr const char* kDot = "dot_general";

void require_contraction_operand(const Tensor& t, const char* side, const char* op,
                                 const Backend& backend) {
  detail::require_operand(t, backend, op, side);
  if (is_bool(t.dtype())) {
    fail(ErrorKind::DTypeMismatch, op, side,
         " has dtype bool; contractions need numbers: cast it to an integer or floating dtype");
  }
}

// Normalises one axis list (negative axes count from the end) and rejects
// out-of-range and repeated axes.
Axes normalize_list(const Axes& axes, std::int64_t rank, const char* side, const char* what) {
  Axes out;
  for (const std::int64_t a : axes) {
    if (a < -rank || a >= rank) {
      fail(ErrorKind::AxisOutOfBounds, kDot, side, " ", what, " axis ", a,
           " is out of range for rank ", rank, " (valid: ", -rank, "..", rank - 1, ")");
    }
    const std::int64_t n = a < 0 ? a + rank : a;
    if (std::find(out.begin(), out.end(), n) != out.end()) {
      fail(ErrorKind::DuplicateAxis, kDot, side, " ", what, " axes list axis ", n,
           " twice; list each axis once");
    }
    out.push_back(n);
  }
  return out;
}

bool contains(const Axes& axes, std::int64_t a) {
  return std::find(axes.begin(), axes.end(), a) != axes.end();
}

Axes free_axes(std::int64_t rank, const Axes& contracting, const Axes& batch) {
  Axes out;
  for (std::int64_t a = 0; a < rank; ++a) {
    if (!contains(contracting, a) && !contains(batch, a)) out.push_back(a);
  }
  return out;
}

// A run of axes read as one column-major index: its total extent and stride.
struct Group {
  std::int64_t extent = 1;
  std::int64_t stride = 0;
};

// Mirrors the view rule of Tensor::reshape: axes merge without a copy when
// each (non-unit) axis starts where the previous one ends.
bool merge_group(const Tensor& t, std::span<const std::int64_t> axes, Group& g) {
  g = Group{};
  bool have = false;
  std::int64_t next = 0;
  for (const std::int64_t ax : axes) {
    const auto u = static_cast<std::size_t>(ax);
    const std::int64_t e = t.shape()[u], s = t.strides()[u];
    if (e == 1) continue;
    if (!have) {
      g.stride = s;
      have = true;
    } else if (s != next) {
      return false;
    }
    next = s * e;
    g.extent *= e;
  }
  return true;
}

// Whether a rows x cols matrix with these strides is a column-major BLAS
// matrix as stored (trans = false) or as its transpose (trans = true).
bool blas_layout(const Group& rows, const Group& cols, bool& trans, std::int64_t& ld) {
  const std::int64_t r = rows.extent, c = cols.extent;
  if ((r == 1 || rows.stride == 1) && (c == 1 || cols.stride >= r)) {
    trans = false;
    ld = c == 1 ? r : cols.stride;
    return true;
  }
  if ((c == 1 || cols.stride == 1) && (r == 1 || rows.stride >= c)) {
    trans = true;
    ld = r == 1 ? c : rows.stride;
    return true;
  }
  return false;
}

bool fold(const Tensor& t, std::span<const std::int64_t> rows, std::span<const std::int64_t> cols,
          GemmOperand& g) {
  Group r, c;
  if (!merge_group(t, rows, r) || !merge_group(t, cols, c)) return false;
  if (!blas_layout(r, c, g.trans, g.ld)) return false;
  g.data = t.raw_data();
  return true;
}

Strides batch_strides_of(const Tensor& t, const Axes& batch) {
  Strides s;
  for (const std::int64_t a : batch) s.push_back(t.strides()[static_cast<std::size_t>(a)]);
  return s;
}

// Compact copy of t permuted to [rows..., cols..., batch...] in `dtype`.
// Broadcast (stride-0) batch axes stay broadcast rather than being expanded.
GemmOperand materialise(Backend& backend, const Tensor& t, const Axes& rows, const Axes& cols,
                        const Axes& batch, DType dtype, Tensor& keep) {
  Axes perm;
  for (auto a : rows) perm.push_back(a);
  for (auto a : cols) perm.push_back(a);
  for (auto a : batch) perm.push_back(a);
  Tensor v = t.permute(perm);
  const std::size_t first_batch = rows.size() + cols.size();
  SmallVector<bool, 8> broadcast(batch.size(), false);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    const std::size_t ax = first_batch + i;
    if (v.shape()[ax] > 1 && v.strides()[ax] == 0) {
      v = v.slice(static_cast<std::int64_t>(ax), 0, 1);
      broadcast[i] = true;
    }
  }
  keep = backend.empty(v.shape(), dtype);
  backend.copy(v, keep);
  GemmOperand g;
  g.data = keep.raw_data();
  g.trans = false;
  std::int64_t row_extent = 1;
  for (std::size_t i = 0; i < rows.size(); ++i) row_extent *= v.shape()[i];
  g.ld = std::max<std::int64_t>(row_extent, 1);
  for (std::size_t i = 0; i < batch.size(); ++i) {
    g.batch_strides.push_back(broadcast[i] ? 0 : keep.strides()[first_batch + i]);
  }
  return g;
}

Axes pick(const Axes& axes, std::span<const std::size_t> order) {
  Axes out;
  for (const std::size_t i : order) out.push_back(axes[i]);
  return out;
}

// The matrix product of two rank-2 operands of one dtype over one axis pair
// whose strides BLAS reads as they are (every small matmul, and the
// transposed products of its backward pass): the GEMM the general path
// below would choose, without its axis bookkeeping. Anything else, and
// every error, takes the general path.
std::optional<Tensor> plain_matrix_product(const Tensor& lhs, const Tensor& rhs,
                                           const DotDims& dims, Backend& backend) {
  if (lhs.rank() != 2 || rhs.rank() != 2 || lhs.dtype() != rhs.dtype() ||
      dims.lhs_contracting.size() != 1 || dims.rhs_contracting.size() != 1 ||
      !dims.lhs_batch.empty() || !dims.rhs_batch.empty()) {
    return std::nullopt;
  }
  std::int64_t lc = dims.lhs_contracting[0], rc = dims.rhs_contracting[0];
  if (lc < -2 || lc > 1 || rc < -2 || rc > 1) return std::nullopt;
  if (lc < 0) lc += 2;
  if (rc < 0) rc += 2;
  const std::int64_t lf = 1 - lc, rf = 1 - rc;
  const std::int64_t m = lhs.shape()[static_cast<std::size_t>(lf)];
  const std::int64_t n = rhs.shape()[static_cast<std::size_t>(rf)];
  const std::int64_t k = lhs.shape()[static_cast<std::size_t>(lc)];
  if (k != rhs.shape()[static_cast<std::size_t>(rc)] || m == 0 || n == 0 || k == 0)
    return std::nullopt;
  GemmOperand ga, gb;
  if (!fold(lhs, std::span(&lf, 1), std::span(&lc, 1), ga) ||
      !fold(rhs, std::span(&rc, 1), std::span(&rf, 1), gb)) {
    return std::nullopt;
  }
  const std::int64_t out_shape[2] = {m, n};
  Tensor out = backend.empty(out_shape, lhs.dtype());
  backend.gemm(lhs.dtype(), m, n, k, ga, gb, out.raw_data(), {});
  return out;
}

}  // namespace

Tensor prim::DotGeneral::execute(const DotGeneral& p, const Operands& in, Backend& backend,
                                 const DimBindings&) {
  const Tensor &lhs = in[0], &rhs = in[1];
  const DotDims& dims = p.dims;
  require_contraction_operand(lhs, "lhs", kDot, backend);
  require_contraction_operand(rhs, "rhs", kDot, backend);
  if (auto product = plain_matrix_product(lhs, rhs, dims, backend)) return std::move(*product);
  if (dims.lhs_contracting.size() != dims.rhs_contracting.size()) {
    fail(ErrorKind::InvalidArgument, kDot, "lhs has ", dims.lhs_contracting.size(),
         " contracting axes but rhs has ", dims.rhs_contracting.size(),
         "; contracting axes pair up in order, so give both lists the same length");
  }
  if (dims.lhs_batch.size() != dims.rhs_batch.size()) {
    fail(ErrorKind::InvalidArgument, kDot, "lhs has ", dims.lhs_batch.size(),
         " batch axes but rhs has ", dims.rhs_batch.size(),
         "; batch axes pair up in order, so give both lists the same length");
  }
  const Axes lc = normalize_list(dims.lhs_contracting, lhs.rank(), "lhs", "contracting");
  const Axes rc = normalize_list(dims.rhs_contracting, rhs.rank(), "rhs", "contracting");
  const Axes lb = normalize_list(dims.lhs_batch, lhs.rank(), "lhs", "batch");
  const Axes rb = normalize_list(dims.rhs_batch, rhs.rank(), "rhs", "batch");
  for (const auto& [side, c, b] : {std::tuple{"lhs", &lc, &lb}, std::tuple{"rhs", &rc, &rb}}) {
    for (const std::int64_t a : *c) {
      if (contains(*b, a)) {
        fail(ErrorKind::InvalidArgument, kDot, side, " axis ", a,
             " is listed as both a contracting and a batch axis; an axis can have one role");
      }
    }
  }
  auto check_pairs = [&](const Axes& l, const Axes& r, const char* what) {
    for (std::size_t i = 0; i < l.size(); ++i) {
      const std::int64_t el = lhs.shape()[static_cast<std::size_t>(l[i])];
      const std::int64_t er = rhs.shape()[static_cast<std::size_t>(r[i])];
      if (el != er) {
        fail(ErrorKind::ShapeMismatch, kDot, what, " pair ", i, ": lhs axis ", l[i], " has extent ",
             el, " but rhs axis ", r[i], " has extent ", er, "; paired axes must match");
      }
    }
  };
  check_pairs(lc, rc, "contracting");
  check_pairs(lb, rb, "batch");
  const DType dtype = promote_types(lhs.dtype(), rhs.dtype());

  const Axes lf = free_axes(lhs.rank(), lc, lb);
  const Axes rf = free_axes(rhs.rank(), rc, rb);
  Shape out_shape, batch_shape;
  std::int64_t m = 1, n = 1, k = 1;
  for (auto a : lf) {
    out_shape.push_back(lhs.shape()[static_cast<std::size_t>(a)]);
    m *= out_shape.back();
  }
  for (auto a : rf) {
    out_shape.push_back(rhs.shape()[static_cast<std::size_t>(a)]);
    n *= out_shape.back();
  }
  for (auto a : lb) {
    batch_shape.push_back(lhs.shape()[static_cast<std::size_t>(a)]);
    out_shape.push_back(batch_shape.back());
  }
  for (auto a : lc) k *= lhs.shape()[static_cast<std::size_t>(a)];

  Tensor out = backend.empty(out_shape, dtype);
  if (out.numel() == 0) return out;
  if (k == 0) {  // empty sums: no BLAS call with a zero dimension
    backend.fill(out, Scalar(0));
    return out;
  }

  // The contracting pairs may be taken in any common order; try the given one
  // and the orders that make either operand's K axes ascend in memory, and
  // keep the one that copies the fewest elements.
  SmallVector<std::size_t, 8> given(lc.size());
  std::iota(given.begin(), given.end(), std::size_t{0});
  auto by_stride = [&](const Tensor& t, const Axes& axes) {
    SmallVector<std::size_t, 8> o = given;
    detail::small_stable_sort(o.begin(), o.end(), [&](std::size_t x, std::size_t y) {
      return std::llabs(t.strides()[static_cast<std::size_t>(axes[x])]) <
             std::llabs(t.strides()[static_cast<std::size_t>(axes[y])]);
    });
    return o;
  };
  const SmallVector<std::size_t, 8> orders[] = {given, by_stride(lhs, lc), by_stride(rhs, rc)};
  const bool lhs_exact = lhs.dtype() == dtype, rhs_exact = rhs.dtype() == dtype;
  std::size_t best = 0;
  std::int64_t best_cost = -1;
  bool best_l = false, best_r = false;
  GemmOperand ga, gb;
  for (std::size_t o = 0; o < std::size(orders); ++o) {
    GemmOperand ta, tb;
    const bool ok_l = lhs_exact && fold(lhs, lf, pick(lc, orders[o]), ta);
    const bool ok_r = rhs_exact && fold(rhs, pick(rc, orders[o]), rf, tb);
    const std::int64_t cost = (ok_l ? 0 : lhs.numel()) + (ok_r ? 0 : rhs.numel());
    if (best_cost < 0 || cost < best_cost) {
      best = o;
      best_cost = cost;
      best_l = ok_l;
      best_r = ok_r;
      ga = ta;
      gb = tb;
    }
    if (cost == 0) break;
  }
  const Axes lc_o = pick(lc, orders[best]), rc_o = pick(rc, orders[best]);
  Tensor keep_l, keep_r;
  if (best_l) {
    ga.batch_strides = batch_strides_of(lhs, lb);
  } else {
    ga = materialise(backend, lhs, lf, lc_o, lb, dtype, keep_l);
  }
  if (best_r) {
    gb.batch_strides = batch_strides_of(rhs, rb);
  } else {
    gb = materialise(backend, rhs, rc_o, rf, rb, dtype, keep_r);
  }
  backend.gemm(dtype, m, n, k, ga, gb, out.raw_data(), batch_shape);
  return out;
}

void prim::DotGeneral::infer(const DotGeneral& p, detail::InferContext& ctx) {
  const TensorMeta &lhs = ctx.in[0], &rhs = ctx.in[1];
  for (const auto& [side, t] : {std::pair{"lhs", &lhs}, std::pair{"rhs", &rhs}}) {
    if (is_bool(t->dtype)) {
      fail(ErrorKind::DTypeMismatch, ctx.op, side,
           " has dtype bool; contractions need numbers: cast it to an integer or floating dtype");
    }
  }
  const DotDims& d = p.dims;
  if (d.lhs_contracting.size() != d.rhs_contracting.size()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "lhs has ", d.lhs_contracting.size(),
         " contracting axes but rhs has ", d.rhs_contracting.size(),
         "; contracting axes pair up in order, so give both lists the same length");
  }
  if (d.lhs_batch.size() != d.rhs_batch.size()) {
    fail(ErrorKind::InvalidArgument, ctx.op, "lhs has ", d.lhs_batch.size(),
         " batch axes but rhs has ", d.rhs_batch.size(),
         "; batch axes pair up in order, so give both lists the same length");
  }
  const Axes lc = normalize_axes_for(ctx, d.lhs_contracting, lhs.rank());
  const Axes rc = normalize_axes_for(ctx, d.rhs_contracting, rhs.rank());
  const Axes lb = normalize_axes_for(ctx, d.lhs_batch, lhs.rank());
  const Axes rb = normalize_axes_for(ctx, d.rhs_batch, rhs.rank());
  auto contains = [](const Axes& v, std::int64_t a) {
    for (std::int64_t x : v) {
      if (x == a) return true;
    }
    return false;
  };
  for (const auto& [side, c, b] : {std::tuple{"lhs", &lc, &lb}, std::tuple{"rhs", &rc, &rb}}) {
    for (std::int64_t a : *c) {
      if (contains(*b, a)) {
        fail(ErrorKind::InvalidArgument, ctx.op, side, " axis ", a,
             " is listed as both a contracting and a batch axis; an axis can have one role");
      }
    }
  }
  auto at = [](const TensorMeta& t, std::int64_t a) {
    return t.shape[static_cast<std::size_t>(a)];
  };
  for (std::size_t i = 0; i < lc.size(); ++i) {
    ctx.require_equal(at(lhs, lc[i]), at(rhs, rc[i]),
                      "contracting pair " + std::to_string(i) + " (lhs axis " +
                          std::to_string(lc[i]) + ", rhs axis " + std::to_string(rc[i]) + ")");
  }
  SymShape out;
  for (std::int64_t a = 0; a < lhs.rank(); ++a) {
    if (!contains(lc, a) && !contains(lb, a)) out.push_back(at(lhs, a));
  }
  for (std::int64_t a = 0; a < rhs.rank(); ++a) {
    if (!contains(rc, a) && !contains(rb, a)) out.push_back(at(rhs, a));
  }
  for (std::size_t i = 0; i < lb.size(); ++i) {
    const SymDim &l = at(lhs, lb[i]), &r = at(rhs, rb[i]);
    ctx.require_equal(l, r,
                      "batch pair " + std::to_string(i) + " (lhs axis " + std::to_string(lb[i]) +
                          ", rhs axis " + std::to_string(rb[i]) + ")");
    out.push_back(l.is_constant() ? l : r);
  }
  ctx.emit(promote_types(lhs.dtype, rhs.dtype), std::move(out));
}

}  // namespace tenferro
