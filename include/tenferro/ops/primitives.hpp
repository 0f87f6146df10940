#pragma once
// The closed set of core primitives. Each has a parameter struct with
// equality and a hash; PrimitiveOp wraps one and implements Op (counts,
// symbolic shape/dtype inference). execute_primitive runs one on a backend
// through the direct operations.

#include <atomic>
#include <optional>
#include <variant>

#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/backend/scan.hpp"
#include "tenferro/backend/sort.hpp"
#include "tenferro/ops/op.hpp"
#include "tenferro/tensor/tensor.hpp"

namespace tenferro::prim {

struct Unary {  // 1 input
  UnaryOp op;
  bool operator==(const Unary&) const = default;
};
struct Binary {  // 2 inputs, NumPy broadcasting
  BinaryOp op;
  bool operator==(const Binary&) const = default;
};
struct Select {  // (cond, a, b), broadcasting
  bool operator==(const Select&) const = default;
};
struct Clamp {  // 1 input
  std::optional<Scalar> lo, hi;
  bool operator==(const Clamp& o) const;
};
struct Reduce {  // 1 input
  ReduceOp op;
  Axes axes;
  bool keepdim = false;
  bool operator==(const Reduce&) const = default;
};
struct Variance {  // 1 input; var, or std when take_sqrt
  Axes axes;
  double correction = 1.0;
  bool keepdim = false;
  bool take_sqrt = false;
  bool operator==(const Variance&) const = default;
};
struct ArgReduce {  // 1 input -> i64
  bool is_max = true;
  std::int64_t axis = 0;
  bool keepdim = false;
  bool operator==(const ArgReduce&) const = default;
};
struct Cumulative {  // 1 input; cumsum (Sum) or cumprod (Prod) along axis
  ReduceOp op = ReduceOp::Sum;
  std::int64_t axis = 0;
  bool reverse = false;  // accumulate from the end
  bool operator==(const Cumulative&) const = default;
};
struct Argsort {  // 1 input -> i64; the first k sorting indices (k < 0: all)
  std::int64_t axis = 0;
  bool descending = false;
  std::int64_t k = -1;
  bool operator==(const Argsort&) const = default;
};
struct DotGeneral {  // 2 inputs
  DotDims dims;
  bool operator==(const DotGeneral& o) const;
};
struct Transpose {  // 1 input, materialised permutation
  Axes perm;
  bool operator==(const Transpose&) const = default;
};
struct Reshape {  // 1 input; shape may be symbolic
  SymShape shape;
  bool operator==(const Reshape&) const = default;
};
struct BroadcastInDim {  // 1 input; shape may be symbolic
  SymShape shape;
  Axes dims;
  bool operator==(const BroadcastInDim&) const = default;
};
struct Slice {  // 1 input, static XLA slice
  Shape start, limit, stride;
  bool operator==(const Slice&) const = default;
};
struct Pad {  // 1 input
  Shape low, high, interior;
  Scalar value;
  bool operator==(const Pad& o) const;
};
struct Concatenate {  // `count` inputs
  std::int64_t axis = 0;
  std::size_t count = 2;
  bool operator==(const Concatenate&) const = default;
};
struct Reverse {  // 1 input
  Axes axes;
  bool operator==(const Reverse&) const = default;
};
struct IndexSelect {  // (x, index)
  std::int64_t axis = 0;
  bool operator==(const IndexSelect&) const = default;
};
struct TakeAlongAxis {  // (x, index)
  std::int64_t axis = 0;
  bool operator==(const TakeAlongAxis&) const = default;
};
struct ScatterAdd {  // (x, index, src)
  std::int64_t axis = 0;
  bool operator==(const ScatterAdd&) const = default;
};
struct Diagonal {  // 1 input
  std::int64_t offset = 0, axis1 = 0, axis2 = 1;
  bool operator==(const Diagonal&) const = default;
};
struct DiagEmbed {  // 1 input
  std::int64_t offset = 0;
  bool operator==(const DiagEmbed&) const = default;
};
struct Triangle {  // 1 input; tril when lower, else triu
  bool lower = true;
  std::int64_t k = 0;
  bool operator==(const Triangle&) const = default;
};
struct Convert {  // 1 input; lossy = cast
  DType dtype = DType::F64;
  bool lossy = false;
  bool operator==(const Convert&) const = default;
};
struct Full {  // 0 inputs; a filled tensor whose shape may be symbolic
  SymShape shape;
  Scalar value;
  DType dtype = DType::F64;
  bool operator==(const Full& o) const;
};
struct Constant {  // 0 inputs; equality is identity of the held tensor
  Tensor value;
  bool operator==(const Constant& o) const;
};
struct Polygamma {  // 1 input; n-th derivative of digamma, n >= 0
  std::int64_t n = 0;
  bool operator==(const Polygamma&) const = default;
};

using Params = std::variant<Unary, Binary, Select, Clamp, Reduce, Variance, ArgReduce, DotGeneral,
                            Transpose, Reshape, BroadcastInDim, Slice, Pad, Concatenate, Reverse,
                            IndexSelect, TakeAlongAxis, ScatterAdd, Diagonal, DiagEmbed, Triangle,
                            Convert, Full, Constant, Polygamma, Cumulative, Argsort>;

std::size_t hash_value(const Params& p);

}  // namespace tenferro::prim

namespace tenferro {

class PrimitiveOp final : public Op {
 public:
  explicit PrimitiveOp(prim::Params params);
  const prim::Params& params() const { return params_; }
  template <class P>
  const P* get() const {
    return std::get_if<P>(&params_);
  }

  /// "add", "exp", "sum", "dot_general", "transpose", ... (the unary/binary/
  /// reduce op name for those kinds).
  std::string_view name() const override;
  std::int32_t kind_key() const override { return kind_key_; }
  std::size_t input_count() const override;
  std::size_t output_count() const override { return 1; }
  /// Computed on first use (eager ops make a PrimitiveOp per call and most
  /// are never hashed).
  std::size_t hash() const override;
  bool equals(const Op& other) const override;
  InferenceResult infer(std::span<const TensorMeta> inputs) const override;
  std::string describe() const override;

 private:
  prim::Params params_;
  mutable std::atomic<std::size_t> hash_{0};  // 0: not computed yet
  std::int32_t kind_key_;
};

/// The number of distinct PrimitiveOp::kind_key() values.
std::int32_t primitive_kind_count();

/// Shorthand constructor: make_primitive(prim::Binary{BinaryOp::Add}).
std::shared_ptr<const PrimitiveOp> make_primitive(prim::Params params);
/// The elementwise primitive of `op`, built once per process and shared (ops
/// are immutable): the hot paths that apply one per call allocate nothing.
const OpPtr& elementwise_primitive(UnaryOp op);
const OpPtr& elementwise_primitive(BinaryOp op);

/// Runs a primitive on concrete inputs through the direct operations.
/// Symbolic extents in the parameters resolve with `bindings`.
Tensor execute_primitive(const PrimitiveOp& op, std::span<const Tensor> inputs, Backend& backend,
                         const DimBindings& bindings = {});

namespace detail {
/// execute_primitive over pointers to the input tensors, with no dimension
/// bindings, for callers whose inputs are not in one array (the eager tier's
/// handles): no copy of each Tensor.
Tensor execute_primitive_refs(const PrimitiveOp& op, std::span<const Tensor* const> inputs,
                              Backend& backend);
}  // namespace detail

}  // namespace tenferro
