// fused_elementwise(): validation, then the backend's fused executor
// (Backend::fused_elementwise; the CPU one is cpu/fused_kernels.cpp).

#include "tenferro/backend/fused.hpp"

#include <array>

#include "tenferro/backend/elementwise.hpp"

namespace tenferro {

namespace {

using Kind = FusedElementwise::Kind;

std::size_t operand_count(Kind k) {
  switch (k) {
    case Kind::Unary:
    case Kind::Clamp:
    case Kind::Convert:
      return 1;
    case Kind::Binary:
      return 2;
    case Kind::Select:
      return 3;
    case Kind::Fill:
      return 0;
  }
  return 0;
}

// The operand dtypes each step's kernel reads, checked before any work so a
// malformed pass is an error, never a misread buffer.
void validate(const FusedElementwise& pass, std::span<const DType> externals, const char* op) {
  if (pass.steps.empty()) fail(ErrorKind::InvalidArgument, op, "the pass has no steps");
  if (pass.buffer_count < 0) fail(ErrorKind::InvalidArgument, op, "negative buffer_count");
  for (std::size_t s = 0; s < pass.steps.size(); ++s) {
    const FusedElementwise::Step& st = pass.steps[s];
    const bool last = s + 1 == pass.steps.size();
    if (st.operands.size() != operand_count(st.kind)) {
      fail(ErrorKind::InvalidArgument, op, "step ", s, " has ", st.operands.size(),
           " operand(s), its kind takes ", operand_count(st.kind));
    }
    if (!last && (st.buffer < 0 || st.buffer >= pass.buffer_count)) {
      fail(ErrorKind::InvalidArgument, op, "step ", s, " uses buffer ", st.buffer, " of ",
           pass.buffer_count);
    }
    std::array<DType, 3> in{};
    for (std::size_t k = 0; k < st.operands.size(); ++k) {
      const FusedElementwise::Operand& o = st.operands[k];
      if (o.external) {
        if (o.index >= externals.size()) {
          fail(ErrorKind::InvalidArgument, op, "step ", s, " reads external ", o.index, " of ",
               externals.size());
        }
        in[k] = externals[o.index];
      } else {
        if (o.index >= s) {
          fail(ErrorKind::InvalidArgument, op, "step ", s, " reads step ", o.index,
               ", which is not an earlier step");
        }
        in[k] = pass.steps[o.index].dtype;
      }
    }
    bool ok = true;
    switch (st.kind) {
      case Kind::Unary:
        ok = is_inexact(in[0]) && unary_result_dtype(st.unary, in[0]) == st.dtype;
        break;
      case Kind::Binary:
        ok = in[0] == in[1] && binary_compute_dtype(st.binary, in[0], in[1]) == in[0] &&
             binary_result_dtype(st.binary, in[0], in[1]) == st.dtype;
        break;
      case Kind::Select:
        ok = in[0] == DType::Bool && in[1] == st.dtype && in[2] == st.dtype;
        break;
      case Kind::Clamp:
        ok = in[0] == st.dtype && !is_complex(st.dtype) && !is_bool(st.dtype);
        break;
      case Kind::Convert:  // converts between any dtypes, like copy
      case Kind::Fill:
        break;
    }
    if (!ok) {
      fail(ErrorKind::DTypeMismatch, op, "step ", s, " does not take its operands' dtypes (result ",
           name(st.dtype), ")");
    }
  }
}

void validate_reduce(const FusedElementwise& pass, ReduceOp reduce, const char* op) {
  if (reduce != ReduceOp::Sum && reduce != ReduceOp::Prod && reduce != ReduceOp::Mean) {
    fail(ErrorKind::InvalidArgument, op, "the reduction must be sum, prod or mean, got ",
         name(reduce), "; run the pass with fused_elementwise and reduce its result");
  }
  const DType dtype = pass.steps.back().dtype;
  if (!is_inexact(dtype)) {
    fail(ErrorKind::DTypeMismatch, op, "the pass's result is ", name(dtype),
         "; a fused reduction takes f32, f64, c64 or c128 (convert in the pass first)");
  }
}

void check_block(std::int64_t block, const char* op) {
  if (block < 1 || block > kMaxFusionBlock) {
    fail(ErrorKind::InvalidArgument, op, "block must be in [1, ", kMaxFusionBlock, "], got ",
         block);
  }
}

// What a call checks of its externals: defined, of the dtypes the pass was
// checked for (when `dtypes` is given), broadcasting to the pass shape,
// placed where the backend reads. One walk over them.
void check_externals(std::span<const Tensor> externals, const Shape& out_shape, Backend& backend,
                     const char* op, std::span<const DType> dtypes = {}) {
  for (std::size_t e = 0; e < externals.size(); ++e) {
    if (!externals[e].defined())
      fail(ErrorKind::InvalidArgument, op, "external ", e, " is undefined");
    if (!dtypes.empty() && externals[e].dtype() != dtypes[e]) {
      fail(ErrorKind::DTypeMismatch, op, "external ", e, " is ", name(externals[e].dtype()),
           " but the pass was checked for ", name(dtypes[e]));
    }
    // broadcast_shapes is ShapeMismatch for incompatible extents; a result
    // other than the pass shape means the external is larger.
    if (externals[e].shape() != out_shape &&
        broadcast_shapes(externals[e].shape().span(), out_shape.span(), op) != out_shape) {
      fail(ErrorKind::ShapeMismatch, op, "external ", e, " of shape ",
           shape_to_string(externals[e].shape()), " does not broadcast to ",
           shape_to_string(out_shape));
    }
    detail::require_operand(externals[e], backend, op, "an external");
  }
}

// The externals' dtypes (a pass is checked against them).
SmallVector<DType, 8> dtypes_of(std::span<const Tensor> externals, const char* op) {
  SmallVector<DType, 8> d;
  for (std::size_t e = 0; e < externals.size(); ++e) {
    if (!externals[e].defined())
      fail(ErrorKind::InvalidArgument, op, "external ", e, " is undefined");
    d.push_back(externals[e].dtype());
  }
  return d;
}

Tensor run_checked(const FusedElementwise& pass, std::optional<ReduceOp> reduce,
                   std::span<const Tensor> externals, std::span<const std::int64_t> shape,
                   Backend& backend, std::int64_t block) {
  if (reduce) {
    Tensor out = backend.empty({}, pass.steps.back().dtype);
    backend.fused_reduce_all(pass, externals, shape, *reduce, block, out);
    return out;
  }
  Tensor out = backend.empty(shape, pass.steps.back().dtype);
  backend.fused_elementwise(pass, externals, block, out);
  return out;
}

}  // namespace

Tensor fused_elementwise(const FusedElementwise& pass, std::span<const Tensor> externals,
                         std::span<const std::int64_t> shape, Backend& backend,
                         std::int64_t block) {
  const char* op = "fused_elementwise";
  check_block(block, op);
  validate(pass, dtypes_of(externals, op).span(), op);
  const Shape out_shape(shape);
  check_externals(externals, out_shape, backend, op);
  return run_checked(pass, std::nullopt, externals, out_shape.span(), backend, block);
}

Tensor fused_reduce_all(const FusedElementwise& pass, ReduceOp reduce,
                        std::span<const Tensor> externals, std::span<const std::int64_t> shape,
                        Backend& backend, std::int64_t block) {
  const char* op = "fused_reduce_all";
  check_block(block, op);
  validate(pass, dtypes_of(externals, op).span(), op);
  validate_reduce(pass, reduce, op);
  const Shape pass_shape(shape);
  check_externals(externals, pass_shape, backend, op);
  return run_checked(pass, reduce, externals, pass_shape.span(), backend, block);
}

CheckedFusedPass::CheckedFusedPass(FusedElementwise pass, std::vector<DType> external_dtypes,
                                   std::optional<ReduceOp> reduce)
    : pass_(std::move(pass)), dtypes_(std::move(external_dtypes)), reduce_(reduce) {
  const char* op = "CheckedFusedPass";
  validate(pass_, dtypes_, op);
  if (reduce_) validate_reduce(pass_, *reduce_, op);
}

void CheckedFusedPass::check(std::span<const Tensor> externals, std::span<const std::int64_t> shape,
                             Backend& backend, std::int64_t block) const {
  const char* op = reduce_ ? "fused_reduce_all" : "fused_elementwise";
  check_block(block, op);
  if (externals.size() != dtypes_.size()) {
    fail(ErrorKind::InvalidArgument, op, "the pass was checked for ", dtypes_.size(),
         " externals, got ", externals.size());
  }
  check_externals(externals, Shape(shape), backend, op, dtypes_);
}

Tensor CheckedFusedPass::run(std::span<const Tensor> externals, std::span<const std::int64_t> shape,
                             Backend& backend, std::int64_t block) const {
  check(externals, shape, backend, block);
  return run_checked(pass_, reduce_, externals, shape, backend, block);
}

namespace {

// Backend::prepare_fused's default: the checked pass kept as it is.
class KeptPass final : public PreparedFusedPass {
 public:
  KeptPass(const CheckedFusedPass& pass, Backend& backend) : pass_(pass), backend_(backend) {}
  Tensor run(std::span<const Tensor> externals, std::span<const std::int64_t> shape,
             std::int64_t block) const override {
    return run_checked(pass_.pass(), pass_.reduce(), externals, shape, backend_, block);
  }

 private:
  CheckedFusedPass pass_;
  Backend& backend_;
};

}  // namespace

PreparedFusedPass::~PreparedFusedPass() = default;

std::unique_ptr<PreparedFusedPass> Backend::prepare_fused(const CheckedFusedPass& pass) {
  return std::make_unique<KeptPass>(pass, *this);
}

}  // namespace tenferro
