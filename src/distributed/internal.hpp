#pragma once
// Internal to the distributed layer: MPI error mapping, collective agreement
// on errors, traffic counting, dtype mapping.

#include <optional>
#include <string>

#include "tenferro/distributed/distributed.hpp"

namespace tenferro::dist::detail {

/// Throws Internal naming `what` and MPI's error string when rc is not MPI_SUCCESS.
void check_mpi(int rc, const char* what);

/// Every rank passes its own error or none. When any rank has one, every
/// rank throws the error of the lowest such rank (same kind, op and message,
/// the message naming that rank); otherwise returns. A collective call.
void agree(MPI_Comm comm, const std::optional<Error>& local);

/// Runs `check` (which throws tenferro::Error on bad local input) and agrees
/// on its outcome across `comm`.
template <class F>
void agreed(MPI_Comm comm, F&& check) {
  std::optional<Error> e;
  try {
    check();
  } catch (const Error& err) {
    e = err;
  }
  agree(comm, e);
}

void count_sent(std::uint64_t bytes);

/// The MPI datatype of one element (complex types as their C types).
MPI_Datatype mpi_type(DType dtype);

/// A process-wide id per communicator handle, for op identity.
std::uint64_t comm_key(MPI_Comm comm);

/// "[Shard(0), Replicate()]".
std::string placements_text(const Placements& ps);
/// Placements that fit the mesh and a rank-`rank` tensor (InvalidArgument or
/// AxisOutOfBounds naming `op` otherwise; metadata every rank shares).
void check_placements(const Placements& ps, const Mesh& mesh, std::int64_t rank, const char* op);
/// Each coordinate's extent along a tensor axis of extent n sharded over a
/// mesh axis of `parts` ranks.
std::vector<std::int64_t> extents(std::int64_t n, int parts, std::int64_t block);
/// The local shape of a global shape under the placements, on this rank.
Shape local_shape(const Shape& global, const Mesh& mesh, const Placements& ps);
/// A tensor's constant shape (Unsupported for a traced one with named sizes).
Shape shape_of(const EagerTensor& t);
Shape shape_of(const TracedTensor& t);

}  // namespace tenferro::dist::detail
