// The spectral part of the linalg mappings (see ops_linalg.cpp).

#include "ops.hpp"

namespace replay {

using namespace tenferro;

template <class T>
MultiFn<T> build_linalg_spectral(const Case&) {
  return {};
}

template MultiFn<EagerTensor> build_linalg_spectral<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_linalg_spectral<TracedTensor>(const Case&);

}  // namespace replay
