#pragma once
// Collectives as eager extension ops (collectives.cpp).

#include <vector>

#include "tenferro/distributed/distributed.hpp"

namespace tenferro::dist::detail {

enum class Coll : unsigned char {
  AllGather,
  ReduceScatter,
  AllReduce,
  AllToAll,
  Broadcast,
  Reduce
};

struct CollParams {
  Coll kind = Coll::AllReduce;
  MPI_Comm comm = MPI_COMM_NULL;
  /// AllGather / ReduceScatter: the tensor axis and each rank's extent along
  /// it. AllToAll: the axis the received blocks join along, with each rank's
  /// extent there before the exchange.
  std::int64_t axis = -1;
  std::vector<std::int64_t> counts;
  /// AllToAll: the axis the local tensor is split along, with each rank's
  /// extent there after the exchange.
  std::int64_t axis2 = -1;
  std::vector<std::int64_t> counts2;
  /// Broadcast: every rank gets the root's indices [start, start + length)
  /// of `axis` (its local extent there: counts[rank]). Reduce, its
  /// transpose: the sum of every rank's input (`length` along `axis`) lands
  /// in the root's [start, start + length), zeros elsewhere and on the other
  /// ranks, a tensor of the rank's local extent counts[rank].
  int root = 0;
  std::int64_t start = 0;
  std::int64_t length = 0;
};

inline CollParams all_reduce_params(MPI_Comm comm) {
  CollParams p;
  p.kind = Coll::AllReduce;
  p.comm = comm;
  return p;
}
inline CollParams along_axis_params(Coll kind, MPI_Comm comm, std::int64_t axis,
                                    std::vector<std::int64_t> counts) {
  CollParams p = all_reduce_params(comm);
  p.kind = kind;
  p.axis = axis;
  p.counts = std::move(counts);
  return p;
}
inline CollParams all_to_all_params(MPI_Comm comm, std::int64_t axis,
                                    std::vector<std::int64_t> counts, std::int64_t axis2,
                                    std::vector<std::int64_t> counts2) {
  CollParams p = along_axis_params(Coll::AllToAll, comm, axis, std::move(counts));
  p.axis2 = axis2;
  p.counts2 = std::move(counts2);
  return p;
}

/// A panel of the root's local tensor for every rank (Coll::Broadcast).
inline CollParams broadcast_params(MPI_Comm comm, int root, std::int64_t axis,
                                   std::vector<std::int64_t> counts, std::int64_t start,
                                   std::int64_t length) {
  CollParams p = along_axis_params(Coll::Broadcast, comm, axis, std::move(counts));
  p.root = root;
  p.start = start;
  p.length = length;
  return p;
}

/// The collective as an op, for AD rules to emit:
/// emitter.emit1(collective_op(all_reduce_params(comm)), {x}).
OpPtr collective_op(const CollParams& params);

/// Runs (and, when x is tracked, records) one collective over params.comm;
/// on a traced value, adds its node to the graph.
EagerTensor collective(const CollParams& params, const EagerTensor& x);
TracedTensor collective(const CollParams& params, const TracedTensor& x);

}  // namespace tenferro::dist::detail
