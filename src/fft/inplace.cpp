// The in-place eager transform: no copy behind the caller's back (the
// eager tier's in-place protocol, docs/extensions.md).

#include <cmath>
#include <variant>

#include "fft/common.hpp"
#include "tenferro/fft/fft.hpp"

namespace tenferro::fft {

EagerTensor fft_inplace(EagerTensor&& x, std::int64_t axis, std::string_view norm, bool inverse) {
  const char* op = "fft_inplace";
  if (!x.defined()) fail(ErrorKind::InvalidArgument, op, "the input is undefined");
  if (x.dtype() != DType::C64 && x.dtype() != DType::C128) {
    fail(ErrorKind::DTypeMismatch, op, "transforms c64 or c128 tensors in place, got ",
         name(x.dtype()), "; use fft (out of place) or convert first");
  }
  const std::int64_t rank = x.rank();
  if (axis < -rank || axis >= rank) {
    fail(ErrorKind::AxisOutOfBounds, op, "axis ", axis, " is out of range for a rank-", rank,
         " tensor");
  }
  const std::int64_t a = axis < 0 ? axis + rank : axis;
  const auto n = static_cast<double>(x.shape()[static_cast<std::size_t>(a)]);
  double scale = 1.0;
  if (norm == "backward") {
    scale = inverse ? 1.0 / n : 1.0;
  } else if (norm == "forward") {
    scale = inverse ? 1.0 : 1.0 / n;
  } else if (norm == "ortho") {
    scale = 1.0 / std::sqrt(n);
  } else {
    fail(ErrorKind::InvalidArgument, op,
         "norm must be \"backward\", \"forward\" or \"ortho\", got \"", std::string(norm), "\"");
  }
  if (n == 0) scale = 1.0;
  EagerRuntimePtr rt = x.runtime();
  prepare_eager_in_place_input(x, detail::FftOp::kFamily, detail::module_factory);
  auto taken = take_unique(std::move(x));
  auto* value = std::get_if<Tensor>(&taken);
  if (value == nullptr) {
    x = std::move(std::get<EagerTensor>(taken));  // handed back unchanged
    fail(ErrorKind::RuntimeState, op,
         "the tensor's storage is shared with other tensors; drop the other references (or use "
         "fft, which does not write its input)");
  }
  if (!value->is_contiguous()) {
    x = adopt_untracked(rt, std::move(*value));
    fail(ErrorKind::InvalidArgument, op, "the tensor must be compact (column-major); use fft");
  }
  ExtensionCaches caches(rt->runtime()->extension_caches(), std::string(detail::FftOp::kFamily));
  try {
    detail::c2c_in_place(*value, {a}, inverse ? 1 : -1, scale, caches,
                         detail::settings_for(rt->backend()));
  } catch (...) {
    x = adopt_untracked(rt, std::move(*value));  // a failed plan leaves x as it was
    throw;
  }
  return adopt_untracked(rt, std::move(*value));
}

}  // namespace tenferro::fft
