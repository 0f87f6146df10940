#pragma once
// A general change of layout as one collective (relayout.cpp): the global
// tensor keeps its elements in column-major order and takes a new global
// shape (a reshape, or the same shape) and new placements; every element
// goes from a rank that holds it straight to the ranks that hold it after,
// in one all-to-all, so no rank ever holds more than its own parts.

#include <vector>

#include "tenferro/distributed/distributed.hpp"

namespace tenferro::dist::detail {

struct RelayoutParams {
  MPI_Comm comm = MPI_COMM_NULL;  ///< the mesh's communicator
  std::vector<int> mesh;          ///< its shape (row-major ranks)
  Shape in_shape, out_shape;      ///< global shapes (equal element counts)
  Placements in, out;             ///< one per mesh axis each
};

/// Runs (and, when x is tracked, records) the relayout of x's local tensor;
/// on a traced value, adds its node. Every pair of placements per mesh axis
/// works: a Partial input turned Shard or Replicate is summed by the ranks
/// that receive it; a Replicate input is sent by the replica that shares the
/// receiver's coordinate on that axis. Linear: its jvp is itself, its vjp
/// the relayout back (cotangent placements: Shard stays, Replicate <->
/// Partial).
EagerTensor relayout(const RelayoutParams& params, const EagerTensor& x);
TracedTensor relayout(const RelayoutParams& params, const TracedTensor& x);

}  // namespace tenferro::dist::detail
