#pragma once
// Shared test helpers: error-kind assertions and naive reference loops.

#include <gtest/gtest.h>

#include <functional>
#include <vector>

// The direct tier only: eager overloads (add(EagerTensor, ...)) would make
// direct-op names ambiguous where tests take their address.
#include "tenferro/ad/ops.hpp"
#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/tensor/typed_tensor.hpp"

/// Asserts that `stmt` throws a tenferro::Error of the given ErrorKind.
#define EXPECT_TF_ERROR(stmt, error_kind)                                                   \
  do {                                                                                      \
    bool tf_thrown_ = false;                                                                \
    try {                                                                                   \
      (void)(stmt);                                                                         \
    } catch (const ::tenferro::Error& e) {                                                  \
      tf_thrown_ = true;                                                                    \
      EXPECT_EQ(e.kind(), (error_kind)) << "message: " << e.what();                         \
      EXPECT_EQ(std::string(e.what()).rfind("[", 0), 0u) << "message must start with [op]"; \
    }                                                                                       \
    EXPECT_TRUE(tf_thrown_) << #stmt " did not throw";                                      \
  } while (0)

namespace tftest {

/// Column-major multi-index of linear position `i` in `shape`.
inline std::vector<std::int64_t> unravel(std::int64_t i, const tenferro::Shape& shape) {
  std::vector<std::int64_t> idx(shape.size());
  for (std::size_t d = 0; d < shape.size(); ++d) {
    idx[d] = i % shape[d];
    i /= shape[d];
  }
  return idx;
}

/// Element `idx` of any tensor (any strides), converted to T.
template <class T>
T element(const tenferro::Tensor& t, const std::vector<std::int64_t>& idx) {
  std::int64_t off = 0;
  for (std::size_t d = 0; d < idx.size(); ++d) off += idx[d] * t.strides()[d];
  tenferro::Tensor one =
      tenferro::Tensor::from_storage(t.storage(), t.dtype(), {}, {}, t.offset() + off);
  tenferro::Tensor out = tenferro::zeros({}, tenferro::dtype_of_v<T>);
  tenferro::Tensor::copy_into(one, out);
  return out.data<T>()[0];
}

/// A view of a fresh tensor with negative and non-unit strides holding the
/// same values as `t`: reverses every axis of a reversed copy.
inline tenferro::Tensor strided_copy(const tenferro::Tensor& t) {
  tenferro::Shape big(t.shape());
  for (auto& e : big) e = e * 2;
  tenferro::Tensor base = tenferro::zeros(big, t.dtype());
  tenferro::Tensor view = base;
  for (std::int64_t d = 0; d < t.rank(); ++d) view = view.slice(d, std::nullopt, std::nullopt, -2);
  // view has extents t.shape() with stride -2 along every axis.
  tenferro::Tensor::copy_into(t, view);
  return view;
}

}  // namespace tftest
