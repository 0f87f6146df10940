#pragma once
// What dist::linalg::svd_truncated and eigh_truncated share (truncation.cpp):
// the kept rank and the discarded weight, both read from a Replicate vector
// of values in descending magnitude, bitwise equal on every rank.

#include <cstdint>

#include "tenferro/distributed/distributed.hpp"
#include "tenferro/linalg/truncated.hpp"

namespace tenferro::dist::detail {

/// The rank `truncation` keeps of the k values in `sorted` (the local tensor
/// of a Replicate vector, descending in magnitude): truncation_rank in the
/// eager tier, checked equal on every rank of `mesh` (a collective call);
/// in a traced program min(k, max_rank), and a cutoff or weight bound is
/// Unsupported (the rank would depend on the values, and the layer's global
/// extents are constants). Bad options are InvalidArgument, as in the
/// single-process family.
template <class T>
std::int64_t kept_rank(const T& sorted, std::int64_t k,
                       const tenferro::linalg::Truncation& truncation, const Mesh& mesh,
                       const char* op);

/// The discarded weight of keeping the first r of the k values in `sorted`
/// (descending in magnitude): sum_{i >= r} |v_i|^2 / sum_i |v_i|^2, 0 for
/// all zeros, computed relative to the largest magnitude (no overflow) as
/// the single-process family does. Differentiable.
template <class T>
T discarded_weight(const T& sorted, std::int64_t r, std::int64_t k);

}  // namespace tenferro::dist::detail
