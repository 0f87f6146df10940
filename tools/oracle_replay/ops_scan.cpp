// Sorting and the layout helpers: sort and topk (their values), kron, trace,
// roll, flip (cumsum and cumprod replay through the catalog). PyTorch's dim d is our axis
// rank - 1 - d on the same memory; kron and roll without dims need no mapping
// (the Kronecker index and the flattening order agree on the same memory).

#include "ops.hpp"
#include "tenferro/ad/composite.hpp"

namespace replay {

using namespace tenferro;

namespace {

std::vector<std::int64_t> int_list(const Case& c, const char* key, int pos) {
  std::vector<std::int64_t> out;
  if (const Json* v = arg(c, key, pos)) {
    if (v->is_array()) {
      out = v->get<std::vector<std::int64_t>>();
    } else {
      out.push_back(v->get<std::int64_t>());
    }
  }
  return out;
}

}  // namespace

template <class T>
OpFn<T> build_scan(const Case& c) {
  const std::string& op = c.op;
  // cumsum and cumprod replay through the catalog (ops_catalog.cpp).
  if (op == "sort") {  // observable: the sorted values
    const auto dim = static_cast<std::int64_t>(arg_double(c, "dim", 0, -1));
    const bool descending = arg_bool(c, "descending", 1, false);
    return [dim, descending](std::span<const T> x) {
      return sort(x[0], dim_to_axis(dim, x[0].rank()), descending).first;
    };
  }
  if (op == "topk") {  // observable: the values
    const auto k = static_cast<std::int64_t>(arg_double(c, "k", 0, 1));
    const auto dim = static_cast<std::int64_t>(arg_double(c, "dim", 1, -1));
    const bool largest = arg_bool(c, "largest", 2, true);
    return [k, dim, largest](std::span<const T> x) {
      return topk(x[0], k, dim_to_axis(dim, x[0].rank()), largest).first;
    };
  }
  if (op == "kron") {
    return [](std::span<const T> x) { return kron(x[0], x[1]); };
  }
  if (op == "trace") {
    return [](std::span<const T> x) { return trace(x[0]); };
  }
  if (op == "flip") {
    return [&c](std::span<const T> x) { return flip(x[0], arg_axes(c, "dims", 0, x[0].rank())); };
  }
  if (op == "roll") {
    const std::vector<std::int64_t> shifts = int_list(c, "shifts", 0);
    const std::vector<std::int64_t> dims = int_list(c, "dims", 1);
    return [shifts, dims](std::span<const T> x) {
      if (dims.empty()) return roll(x[0], shifts.at(0));
      Axes axes;
      for (std::int64_t d : dims) axes.push_back(dim_to_axis(d, x[0].rank()));
      return roll(x[0], std::span<const std::int64_t>(shifts), axes);
    };
  }
  return {};
}

template OpFn<EagerTensor> build_scan<EagerTensor>(const Case&);
template OpFn<TracedTensor> build_scan<TracedTensor>(const Case&);

}  // namespace replay
