// BLACS process grids over meshes, ScaLAPACK's block-cyclic layout of a
// matrix DTensor, its array descriptor, and the redistribution into it
// (distributed/linalg.hpp).

#include <map>
#include <mutex>
#include <tuple>
#include <type_traits>

#include "distributed/collectives.hpp"
#include "distributed/internal.hpp"
#include "distributed/scalapack_api.hpp"
#include "tenferro/distributed/linalg.hpp"

namespace tenferro::dist {

namespace detail {

BlacsGrid blacs_subgrid(MPI_Comm comm, int rows, int cols, int used_rows, int used_cols) {
  // Grids live until MPI_Finalize, as split communicators do: ops and plan
  // caches name a grid by its context number, and BLACS would hand a freed
  // number to the next grid. One per (communicator, shape, used part), made
  // in the same order on every rank of the communicator (the calls that
  // reach here are SPMD).
  static std::mutex mutex;
  static std::map<std::tuple<MPI_Comm, int, int, int, int>, BlacsGrid> grids;
  std::lock_guard lock(mutex);
  const auto key = std::make_tuple(comm, rows, cols, used_rows, used_cols);
  if (const auto it = grids.find(key); it != grids.end()) return it->second;
  int me = 0, np = 0;
  scalapack::Cblacs_pinfo(&me, &np);
  int rank = 0;
  check_mpi(MPI_Comm_rank(comm, &rank), "blacs_grid");
  BlacsGrid g;
  g.context = scalapack::Csys2blacs_handle(comm);
  if (used_rows == rows && used_cols == cols) {
    scalapack::Cblacs_gridinit(&g.context, "Row", rows, cols);
  } else {
    // The first used_rows x used_cols positions of the row-major grid: rank
    // r * cols + c at (r, c). Every rank of the communicator takes part.
    std::vector<int> map(static_cast<std::size_t>(used_rows) * used_cols);
    for (int c = 0; c < used_cols; ++c)
      for (int r = 0; r < used_rows; ++r)
        map[static_cast<std::size_t>(r + c * used_rows)] = r * cols + c;
    scalapack::Cblacs_gridmap(&g.context, map.data(), used_rows, used_rows, used_cols);
  }
  const bool member = rank / cols < used_rows && rank % cols < used_cols;
  g.rows = used_rows;
  g.cols = used_cols;
  g.row = g.col = -1;
  if (member) {
    int nprow = 0, npcol = 0;
    scalapack::Cblacs_gridinfo(g.context, &nprow, &npcol, &g.row, &g.col);
    // Row-major over the communicator: rank r at (r / cols, r % cols), the
    // mesh's own order, so the grid coordinates are the mesh coordinates.
    if (nprow != used_rows || npcol != used_cols || g.row != rank / cols || g.col != rank % cols) {
      fail(ErrorKind::Internal, "blacs_grid", "BLACS placed rank ", rank, " of a ", used_rows, "x",
           used_cols, " grid at (", g.row, ", ", g.col, ") of ", nprow, "x", npcol,
           ", not at its row-major position");
    }
  } else {
    g.context = -1;
  }
  grids.emplace(key, g);
  return g;
}

}  // namespace detail

BlacsGrid blacs_grid(const Mesh& mesh, int rows, int cols) {
  const Communicator& comm = mesh.comm();
  if (rows < 1 || cols < 1 || static_cast<long long>(rows) * cols != comm.size()) {
    fail(ErrorKind::InvalidArgument, "blacs_grid", "a ", rows, "x", cols,
         " grid does not cover the ", comm.size(), " ranks of the mesh's communicator");
  }
  return detail::blacs_subgrid(comm.handle(), rows, cols, rows, cols);
}

Placements block_cyclic_placements(const Mesh& mesh, std::int64_t block) {
  if (block < 1) {
    fail(ErrorKind::InvalidArgument, "block_cyclic_placements",
         "a block-cyclic block size is positive, got ", block);
  }
  if (mesh.ndim() == 2) return {Shard(0, block), Shard(1, block)};
  return {Shard(1, block)};
}

namespace detail {

/// block_cyclic_layout with `op` naming the caller in errors.
template <class T>
BlockCyclicLayout layout_of(const BasicDTensor<T>& a, const char* op) {
  if (!a.defined()) fail(ErrorKind::InvalidArgument, op, "the matrix is undefined");
  if (a.rank() != 2) {
    fail(ErrorKind::RankMismatch, op, "ScaLAPACK works on matrices; got a rank-", a.rank(),
         " tensor ", a.to_string());
  }
  const Mesh& mesh = a.mesh();
  const Placements& ps = a.placements();
  BlockCyclicLayout layout;
  int rows = 0, cols = 0;
  if (mesh.ndim() == 2 && ps[0] == Shard(0, ps[0].block) && ps[1] == Shard(1, ps[0].block) &&
      ps[0].block > 0) {
    rows = mesh.size(0);
    cols = mesh.size(1);
    layout.block = ps[0].block;
  } else if (mesh.ndim() == 1 && ps[0].is_shard() && ps[0].block > 0) {
    const bool by_columns = ps[0].axis == 1;
    rows = by_columns ? 1 : mesh.size(0);
    cols = by_columns ? mesh.size(0) : 1;
    layout.block = ps[0].block;
  } else {
    const std::string want =
        mesh.ndim() == 2 ? "[Shard(0, nb), Shard(1, nb)]" : "[Shard(1, nb)] or [Shard(0, nb)]";
    fail(ErrorKind::InvalidArgument, op, "the matrix is placed ", placements_text(ps), " on a ",
         mesh.to_string(), " mesh; ScaLAPACK needs the block-cyclic layout ", want,
         " (one block size nb > 0); call dist::to_block_cyclic(a, nb) first");
  }
  layout.grid = blacs_grid(mesh, rows, cols);
  return layout;
}

std::array<int, 9> descriptor_of(std::int64_t m, std::int64_t n, const BlockCyclicLayout& layout,
                                 const char* op) {
  if (m > INT32_MAX || n > INT32_MAX) {
    fail(ErrorKind::Unsupported, op, "a ", m, "x", n,
         " matrix exceeds ScaLAPACK's 32-bit dimensions");
  }
  const int mi = static_cast<int>(m), ni = static_cast<int>(n);
  const int nb = static_cast<int>(layout.block), zero = 0;
  const int local_rows =
      static_cast<int>(shard_extent(m, layout.grid.rows, layout.grid.row, layout.block));
  const int lld = std::max(1, local_rows);
  std::array<int, 9> desc{};
  int info = 0;
  scalapack::descinit_(desc.data(), &mi, &ni, &nb, &nb, &zero, &zero, &layout.grid.context, &lld,
                       &info);
  if (info != 0) {
    fail(ErrorKind::Internal, op, "descinit refused argument ", -info, " of a ", m, "x", n,
         " matrix with blocks of ", nb, " on a ", layout.grid.rows, "x", layout.grid.cols, " grid");
  }
  return desc;
}

template BlockCyclicLayout layout_of(const DTensor&, const char*);
template BlockCyclicLayout layout_of(const TracedDTensor&, const char*);

}  // namespace detail

template <class T>
BlockCyclicLayout block_cyclic_layout(const BasicDTensor<T>& a) {
  return detail::layout_of(a, "block_cyclic_layout");
}

template <class T>
std::array<int, 9> descriptor(const BasicDTensor<T>& a) {
  const BlockCyclicLayout layout = detail::layout_of(a, "descriptor");
  return detail::descriptor_of(a.shape()[0], a.shape()[1], layout, "descriptor");
}

namespace {

/// Each coordinate's extent along a tensor axis of extent n on `parts` ranks.
std::vector<std::int64_t> extents(std::int64_t n, int parts, std::int64_t block) {
  std::vector<std::int64_t> v;
  for (int r = 0; r < parts; ++r) v.push_back(shard_extent(n, parts, r, block));
  return v;
}

/// Rank 0's indices, then rank 1's, ... of an axis of extent n.
std::vector<std::int64_t> rank_major(std::int64_t n, int parts, std::int64_t block) {
  std::vector<std::int64_t> order;
  for (int r = 0; r < parts; ++r) {
    const auto idx = shard_indices(n, parts, r, block);
    order.insert(order.end(), idx.begin(), idx.end());
  }
  return order;
}

/// x's entries at positions `idx` along `axis` (a differentiable gather).
template <class T>
T take(const T& x, std::int64_t axis, const std::vector<std::int64_t>& idx) {
  const Tensor index = Tensor::from_col_major({static_cast<std::int64_t>(idx.size())}, idx);
  if constexpr (std::is_same_v<T, TracedTensor>) {
    return index_select(x, axis, constant(index));
  } else {
    return index_select(x, axis, x.runtime()->tensor(index));
  }
}

/// Shard(a, b1) -> Shard(c, b2) with a != c on a 1-D mesh as one
/// all-to-all: each rank orders its columns (axis c) by their new owner,
/// sends each owner its part, and joins the parts it receives along a in
/// rank order, which is the new local order when a was contiguous and is
/// put back into increasing order otherwise. Nobody holds more than its new
/// part plus its old one.
template <class T>
BasicDTensor<T> swap_sharded_axis(const BasicDTensor<T>& x, const Placement& to) {
  const Mesh& mesh = x.mesh();
  const Placement& from = x.placements()[0];
  const int parts = mesh.size(0);
  const std::int64_t na = x.shape()[static_cast<std::size_t>(from.axis)];
  const std::int64_t nc = x.shape()[static_cast<std::size_t>(to.axis)];
  T local = x.local();
  if (to.block > 0 && parts > 1) {
    // Local positions along c in rank-major order of the target layout.
    local = take(local, to.axis, rank_major(nc, parts, to.block));
  }
  local = detail::collective(detail::all_to_all_params(mesh.axis_comm(0).handle(), from.axis,
                                                       extents(na, parts, from.block), to.axis,
                                                       extents(nc, parts, to.block)),
                             local);
  if (from.block > 0 && parts > 1) {
    // Received along a in the old layout's rank-major order; the whole axis
    // a is local now: back to natural order.
    const auto order = rank_major(na, parts, from.block);
    std::vector<std::int64_t> inverse(order.size());
    for (std::size_t k = 0; k < order.size(); ++k)
      inverse[static_cast<std::size_t>(order[k])] = static_cast<std::int64_t>(k);
    local = take(local, from.axis, inverse);
  }
  return BasicDTensor<T>(x.shape(), mesh, {to}, local);
}

}  // namespace

template <class T>
BasicDTensor<T> to_block_cyclic(const BasicDTensor<T>& a, std::int64_t block) {
  if (!a.defined()) fail(ErrorKind::InvalidArgument, "to_block_cyclic", "the matrix is undefined");
  if (a.rank() != 2) {
    fail(ErrorKind::RankMismatch, "to_block_cyclic", "ScaLAPACK works on matrices; got a rank-",
         a.rank(), " tensor ", a.to_string());
  }
  Placements target = block_cyclic_placements(a.mesh(), block);
  if (a.placements() == target) return a;
  // On a 1-D mesh a sharded matrix goes there by all-to-alls (redistribute
  // would pass through Replicate: the whole matrix on every rank).
  if (a.mesh().ndim() == 1 && a.placements()[0].is_shard()) {
    BasicDTensor<T> x = a;
    if (x.placements()[0].axis == 1) x = swap_sharded_axis(x, Shard(0));
    return swap_sharded_axis(x, target[0]);
  }
  return redistribute(a, std::move(target));
}

#define TENFERRO_DIST_SL_INSTANTIATE(T)                                   \
  template BlockCyclicLayout block_cyclic_layout(const BasicDTensor<T>&); \
  template std::array<int, 9> descriptor(const BasicDTensor<T>&);         \
  template BasicDTensor<T> to_block_cyclic(const BasicDTensor<T>&, std::int64_t);
TENFERRO_DIST_SL_INSTANTIATE(EagerTensor)
TENFERRO_DIST_SL_INSTANTIATE(TracedTensor)
#undef TENFERRO_DIST_SL_INSTANTIATE

}  // namespace tenferro::dist
