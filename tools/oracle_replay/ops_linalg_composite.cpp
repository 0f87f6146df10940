// The composite part of the linalg mappings (see ops_linalg.cpp).

#include "ops.hpp"

namespace replay {

using namespace tenferro;

template <class T>
MultiFn<T> build_linalg_composite(const Case&) {
  return {};
}

template MultiFn<EagerTensor> build_linalg_composite<EagerTensor>(const Case&);
template MultiFn<TracedTensor> build_linalg_composite<TracedTensor>(const Case&);

}  // namespace replay
