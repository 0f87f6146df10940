#pragma once
// A second backend for the tests: plain serial loops over its own memory,
// with a few kernels only. It shows that a backend plugs in without editing
// the runtime or the AD layers (Runtime::builder().backend(...)), and runs the
// part of the backend conformance suite its kernels cover.
//
// Its tensors live at the placement "reference:0": the host accessors
// (to_vector, data<T>) refuse them, so a test that runs an operation on this
// backend and gets a result proves the operation made no host copy on the
// way. to_reference() and to_host() are the explicit transfers.

#include <memory>
#include <set>
#include <string>

#include "tenferro/backend/backend.hpp"

namespace tftest {

class ReferenceBackend final : public tenferro::Backend {
 public:
  ReferenceBackend();
  ~ReferenceBackend() override;

  std::string_view kind() const override { return "reference"; }
  tenferro::Placement placement() const override { return {"reference", 0}; }
  using Backend::empty;
  tenferro::Tensor empty(std::span<const std::int64_t> shape, tenferro::DType dtype) override;

  void copy(const tenferro::Tensor& src, const tenferro::Tensor& dst) override;
  void cast(const tenferro::Tensor& src, const tenferro::Tensor& dst) override;
  void fill(const tenferro::Tensor& dst, tenferro::Scalar value) override;
  void unary(tenferro::UnaryOp op, const tenferro::Tensor& x, const tenferro::Tensor& out) override;
  void binary(tenferro::BinaryOp op, const tenferro::Tensor& a, const tenferro::Tensor& b,
              const tenferro::Tensor& out) override;
  void where(const tenferro::Tensor& cond, const tenferro::Tensor& a, const tenferro::Tensor& b,
             const tenferro::Tensor& out) override;
  void reduce(tenferro::ReduceOp op, const tenferro::Tensor& x, std::span<const bool> reduced,
              const tenferro::Tensor& out) override;
  void read(const tenferro::Tensor& src, void* dst) override;
  void write(const void* src, const tenferro::Tensor& dst) override;
  void gemm(tenferro::DType dtype, std::int64_t m, std::int64_t n, std::int64_t k,
            const tenferro::GemmOperand& a, const tenferro::GemmOperand& b, void* c,
            const tenferro::Shape& batch_shape) override;

  /// The elementwise and reduction ops it has kernels for.
  static bool implements(tenferro::UnaryOp op);
  static bool implements(tenferro::BinaryOp op);
  static bool implements(tenferro::ReduceOp op);
  /// Kernels run so far (all threads).
  std::size_t kernels_run() const;

 private:
  struct Counter;
  std::unique_ptr<Counter> counter_;
};

/// A compact copy of a host tensor in the backend's memory, and back.
tenferro::Tensor to_reference(const tenferro::Tensor& host, ReferenceBackend& backend);
tenferro::Tensor to_host(const tenferro::Tensor& t);

/// Whether `e` is Unsupported because the reference backend lacks the kernel
/// (what a suite run on it may skip; any other error is a failure).
bool reference_lacks_kernel(const tenferro::Error& e);

}  // namespace tftest
