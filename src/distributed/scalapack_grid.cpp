// BLACS process grids over meshes, ScaLAPACK's block-cyclic layout of a
// matrix DTensor, its array descriptor, and the redistribution into it
// (distributed/linalg.hpp).

#include <map>
#include <mutex>
#include <tuple>

#include "distributed/internal.hpp"
#include "distributed/scalapack_api.hpp"
#include "tenferro/distributed/linalg.hpp"

namespace tenferro::dist {

namespace {

std::string placements_text(const Placements& ps) {
  std::string s = "[";
  for (std::size_t k = 0; k < ps.size(); ++k) s += (k ? ", " : "") + ps[k].to_string();
  return s + "]";
}

}  // namespace

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

template <class T>
BasicDTensor<T> to_block_cyclic(const BasicDTensor<T>& a, std::int64_t block) {
  if (!a.defined()) fail(ErrorKind::InvalidArgument, "to_block_cyclic", "the matrix is undefined");
  if (a.rank() != 2) {
    fail(ErrorKind::RankMismatch, "to_block_cyclic", "ScaLAPACK works on matrices; got a rank-",
         a.rank(), " tensor ", a.to_string());
  }
  Placements target = block_cyclic_placements(a.mesh(), block);
  if (a.placements() == target) return a;
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
