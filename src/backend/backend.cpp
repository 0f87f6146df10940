#include "tenferro/backend/backend.hpp"

#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"

#include <map>
#include <mutex>
#include <string>
#include <utility>

namespace tenferro {

struct Backend::Attachments {
  std::mutex mutex;
  std::map<std::string, std::shared_ptr<void>, std::less<>> items;
};

Backend::Backend() : attachments_(std::make_unique<Attachments>()) {}

Backend::~Backend() {
  release_attachments();
}

std::shared_ptr<void> Backend::attachment(std::string_view key,
                                          const std::function<std::shared_ptr<void>()>& make) {
  {
    std::lock_guard<std::mutex> lock(attachments_->mutex);
    auto it = attachments_->items.find(key);
    if (it != attachments_->items.end()) return it->second;
  }
  // Made outside the lock: make() may itself use this backend.
  std::shared_ptr<void> made = make();
  std::lock_guard<std::mutex> lock(attachments_->mutex);
  auto [it, inserted] = attachments_->items.try_emplace(std::string(key), std::move(made));
  return it->second;
}

void Backend::release_attachments() {
  std::map<std::string, std::shared_ptr<void>, std::less<>> items;
  {
    std::lock_guard<std::mutex> lock(attachments_->mutex);
    items.swap(attachments_->items);
  }
  items.clear();  // outside the lock: a destructor may use the backend
}

BackendSession::~BackendSession() = default;

void detail::operand_error(const Tensor& x, const Backend& backend, std::string_view op,
                           std::string_view what) {
  if (!x.defined()) {
    fail(ErrorKind::InvalidArgument, std::string(op), what,
         " is undefined (default-constructed); pass a tensor");
  }
  fail(ErrorKind::ContextMismatch, std::string(op), what, " lives on ", to_string(x.placement()),
       " but the ", backend.kind(), " backend works on ", to_string(backend.placement()),
       "; transfer it to the backend first");
}

Tensor full(std::span<const std::int64_t> shape, Scalar value, DType dtype, Backend& backend) {
  shape_numel(Shape(shape), "full");  // a shape no tensor can have names this op
  Tensor out = backend.empty(shape, dtype);
  backend.fill(out, value);
  return out;
}

void Backend::read(const Tensor& src, void* dst) {
  if (!src.placement().is_host()) no_kernel("read", "read");
  Tensor host = Tensor::wrap(dst, src.dtype(), src.shape());
  Tensor::copy_into(src, host);
}

void Backend::write(const void* src, const Tensor& dst) {
  if (!dst.placement().is_host()) no_kernel("write", "write");
  const Tensor host = Tensor::wrap(const_cast<void*>(src), dst.dtype(), dst.shape());
  Tensor::copy_into(host, dst);
}

Tensor from_host(const Tensor& t, Backend& backend) {
  if (!t.defined()) {
    fail(ErrorKind::InvalidArgument, "from_host", "the tensor is undefined; pass a tensor");
  }
  if (!t.placement().is_host()) {
    fail(ErrorKind::InvalidArgument, "from_host", "the tensor lives on ", to_string(t.placement()),
         ", not on the host");
  }
  if (backend.accepts(t.placement())) return t;
  const Tensor compact = t.contiguous();
  Tensor out = backend.empty(t.shape(), t.dtype());
  backend.write(compact.raw_data(), out);
  return out;
}

Tensor to_host(const Tensor& t, Backend& backend) {
  detail::require_operand(t, backend, "to_host");
  if (t.placement().is_host() && t.is_contiguous()) return t;
  Tensor out = zeros(t.shape(), t.dtype());
  backend.read(t, out.raw_data());
  return out;
}

Tensor copy(const Tensor& x, Backend& backend) {
  detail::require_operand(x, backend, "copy");
  Tensor out = backend.empty(x.shape(), x.dtype());
  backend.copy(x, out);
  return out;
}

EngineId Backend::engine_id() const {
  return EngineId("tenferro." + std::string(kind()) + ".v1");
}

std::unique_ptr<BackendSession> Backend::enter_session(bool) {
  return std::make_unique<BackendSession>();
}

// ---- kernels a backend does not have -----------------------------------------

void Backend::no_kernel(std::string_view op, std::string_view kernel) const {
  fail(ErrorKind::Unsupported, std::string(op), "the ", kind(), " backend has no ", kernel,
       " kernel (Backend::", kernel, "); run it on a backend that implements it, e.g. CpuBackend");
}

void Backend::copy(const Tensor&, const Tensor&) {
  no_kernel("copy", "copy");
}
void Backend::cast(const Tensor&, const Tensor&) {
  no_kernel("cast", "cast");
}
void Backend::fill(const Tensor&, Scalar) {
  no_kernel("fill", "fill");
}
void Backend::unary(UnaryOp op, const Tensor&, const Tensor&) {
  no_kernel(tenferro::name(op), "unary");
}
void Backend::binary(BinaryOp op, const Tensor&, const Tensor&, const Tensor&) {
  no_kernel(tenferro::name(op), "binary");
}
void Backend::polygamma(std::int64_t, const Tensor&, const Tensor&) {
  no_kernel("polygamma", "polygamma");
}
void Backend::where(const Tensor&, const Tensor&, const Tensor&, const Tensor&) {
  no_kernel("where", "where");
}
void Backend::clamp(const Tensor&, std::optional<Scalar>, std::optional<Scalar>, const Tensor&) {
  no_kernel("clamp", "clamp");
}
void Backend::zero_triangle(const Tensor&, std::int64_t, bool keep_lower) {
  no_kernel(keep_lower ? "tril" : "triu", "zero_triangle");
}
void Backend::reduce(ReduceOp op, const Tensor&, std::span<const bool>, const Tensor&) {
  no_kernel(tenferro::name(op), "reduce");
}
void Backend::variance(const Tensor&, std::span<const bool>, double, bool root, const Tensor&) {
  no_kernel(root ? "std" : "var", "variance");
}
void Backend::arg_reduce(bool is_max, const Tensor&, std::int64_t, const Tensor&) {
  no_kernel(is_max ? "argmax" : "argmin", "arg_reduce");
}
void Backend::cumulate(const Tensor&, std::int64_t, bool product, bool) {
  no_kernel(product ? "cumprod" : "cumsum", "cumulate");
}
void Backend::cumulate_into(const Tensor& x, const Tensor& out, std::int64_t axis, bool product,
                            bool reverse) {
  copy(x, out);
  cumulate(out, axis, product, reverse);
}
void Backend::argsort(const Tensor&, std::int64_t, bool, const Tensor&) {
  no_kernel("argsort", "argsort");
}
void Backend::sort_into(const Tensor& x, std::int64_t axis, bool descending, const Tensor& values,
                        const Tensor& indices) {
  argsort(x, axis, descending, indices);
  gather(x, indices, axis, values);
}
Tensor Backend::normalize_indices(const Tensor&, std::int64_t, std::int64_t, const char* op) {
  no_kernel(op, "normalize_indices");
}
void Backend::gather(const Tensor&, const Tensor&, std::int64_t, const Tensor&) {
  no_kernel("gather", "gather");
}
void Backend::scatter_add(const Tensor&, const Tensor&, std::int64_t, const Tensor&) {
  no_kernel("scatter_add", "scatter_add");
}
void Backend::gemm(DType, std::int64_t, std::int64_t, std::int64_t, const GemmOperand&,
                   const GemmOperand&, void*, const Shape&) {
  no_kernel("dot_general", "gemm");
}
void Backend::fused_elementwise(const FusedElementwise&, std::span<const Tensor>, std::int64_t,
                                const Tensor&) {
  no_kernel("fused_elementwise", "fused_elementwise");
}
void Backend::fused_reduce_all(const FusedElementwise&, std::span<const Tensor>,
                               std::span<const std::int64_t>, ReduceOp, std::int64_t,
                               const Tensor&) {
  no_kernel("fused_reduce_all", "fused_reduce_all");
}

}  // namespace tenferro
