#pragma once
// Maps an oracle case (PyTorch op name and keyword arguments) onto tenferro's
// own API, for either tier: OpFn<EagerTensor> runs eagerly, OpFn<TracedTensor>
// builds graph nodes. Builders are templates instantiated for both tensor types
// so both modes run literally the same mapping.

#include <algorithm>
#include <functional>
#include <optional>
#include <span>
#include <string>

#include "case.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/linalg/linalg.hpp"

namespace replay {

/// The observable of the op on its inputs (the case's single output).
template <class T>
using OpFn = std::function<T(std::span<const T>)>;

enum class Support {
  Ok,         // mapped; run the checks
  Linalg,     // a linear-algebra family (a later issue): skipped
  Exception,  // documented in docs/oracle-exceptions.md: skipped with the reason
  Unknown,    // no mapping: skipped and listed (should not happen for the dev set)
};

struct Classification {
  Support support = Support::Unknown;
  std::string reason;
};

Classification classify(const Case& c);

/// The observable's outputs, one per output key of the case's probes (in
/// their order): a single-output op's mapping wrapped, or a linalg mapping.
template <class T>
using MultiFn = std::function<std::vector<T>(std::span<const T>)>;
template <class T>
MultiFn<T> build_multi(const Case& c);
/// The linalg mappings (ops_linalg*.cpp); empty when the op has none yet.
template <class T>
MultiFn<T> build_linalg(const Case& c);
template <class T>
MultiFn<T> build_linalg_spectral(const Case& c);  // ops_linalg_spectral.cpp
template <class T>
MultiFn<T> build_linalg_factor(const Case& c);  // ops_linalg_factor.cpp
template <class T>
MultiFn<T> build_linalg_composite(const Case& c);  // ops_linalg_composite.cpp
/// The torch.fft mappings (ops_fft.cpp); empty for other ops.
template <class T>
MultiFn<T> build_fft(const Case& c);
/// The torch.fft names build_fft maps ("fft_fft", ..., "fft_ihfft2").
std::vector<std::string> fft_names();
/// The einsum mapping (ops_einsum.cpp); empty for other ops.
template <class T>
MultiFn<T> build_einsum(const Case& c);

/// The output keys of the case's probes ("value", "output_0", "s", ...).
std::vector<std::string> case_output_keys(const Case& c);
/// N of an "output_N" key; std::runtime_error otherwise.
std::size_t output_index(const std::string& key);

/// A PyTorch matrix [..., m, n] (row-major) loads as our [n, m, ...]
/// (column-major): this swaps axes 0 and 1 so the matrix is ours [m, n, ...].
/// Its own inverse: apply it to matrix outputs too. Rank < 2 is unchanged.
template <class T>
T mat(const T& x) {
  return x.rank() >= 2 ? tenferro::transpose(x, 0, 1) : x;
}

/// PyTorch's OpInfo differentiates ops on Hermitian matrices through
/// gradcheck_wrapper_hermitian_input, op(A + A^H): the oracle references
/// (jvp, vjp, hvp and their finite differences) are of that function, so the
/// mappings of cholesky, eigh, eigvalsh and the Hermitian pinv apply it too.
template <class T>
T hermitian_input(const T& x) {
  T t = tenferro::transpose(x, 0, 1);
  return tenferro::add(x, tenferro::is_complex(x.dtype()) ? tenferro::conj(t) : t);
}

/// The op for `c`; an empty function when the op has no mapping. Unsupported
/// keyword arguments throw std::runtime_error.
template <class T>
OpFn<T> build_op(const Case& c);

// ---- pieces shared by the table files ---------------------------------------------

template <class T>
OpFn<T> build_elementwise(const Case& c);  // ops_elementwise.cpp
template <class T>
OpFn<T> build_special(const Case& c);  // ops_special.cpp
template <class T>
OpFn<T> build_nn(const Case& c);  // ops_nn.cpp
template <class T>
OpFn<T> build_reduction(const Case& c);  // ops_other.cpp
template <class T>
OpFn<T> build_scan(const Case& c);  // ops_scan.cpp
/// Ops named in the primitive catalog, built by name (ops_catalog.cpp).
template <class T>
OpFn<T> build_catalog(const Case& c);

/// An op argument: op_kwargs[key] when present, else the positional
/// op_args[pos] (pos < 0: keyword only); nullptr when absent or null.
const Json* arg(const Case& c, const char* key, int pos);
double arg_double(const Case& c, const char* key, int pos, double fallback);
bool arg_bool(const Case& c, const char* key, int pos, bool fallback);
/// PyTorch `dim` (int, list, or null/absent/[] = every axis) mapped to our
/// axes for an input of rank `rank`.
tenferro::Axes arg_axes(const Case& c, const char* key, int pos, std::int64_t rank);
/// The number after `marker` in the op name ("polygamma_polygamma_n_3" -> 3).
std::optional<std::int64_t> name_suffix_int(const std::string& op, const std::string& marker);

// ---- tier adapters (the few places where the two tiers' signatures differ) --------

tenferro::Shape concrete_shape(const tenferro::EagerTensor& x);
tenferro::Shape concrete_shape(const tenferro::TracedTensor& x);
tenferro::EagerTensor reshape_to(const tenferro::EagerTensor& x, const tenferro::Shape& shape);
tenferro::TracedTensor reshape_to(const tenferro::TracedTensor& x, const tenferro::Shape& shape);

/// PyTorch broadcasting aligns trailing row-major dimensions, which are our
/// leading column-major axes: the lower-rank operand gets trailing unit axes.
template <class T>
T pad_rank(const T& x, std::int64_t rank) {
  if (x.rank() >= rank) return x;
  tenferro::Shape s = concrete_shape(x);
  while (static_cast<std::int64_t>(s.size()) < rank) s.push_back(1);
  return reshape_to(x, s);
}

template <class T, class F>
OpFn<T> unary_op(F f) {
  return [f](std::span<const T> x) { return f(x[0]); };
}

/// Binary ops broadcast like PyTorch (see pad_rank).
template <class T, class F>
OpFn<T> binary_op(F f) {
  return [f](std::span<const T> x) {
    const std::int64_t r = std::max(x[0].rank(), x[1].rank());
    return f(pad_rank(x[0], r), pad_rank(x[1], r));
  };
}

}  // namespace replay
