// Sharded tensors: layouts, distribute / scatter / redistribute / gather,
// elementwise ops and sums with sharding rules, backward (distributed.hpp).

#include <algorithm>
#include <numeric>
#include <optional>

#include "distributed/collectives.hpp"
#include "distributed/internal.hpp"
#include "distributed/relayout.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro::dist {

namespace {

using detail::Coll;

}  // namespace

namespace detail {

std::string placements_text(const Placements& ps) {
  std::string s = "[";
  for (std::size_t k = 0; k < ps.size(); ++k) s += (k ? ", " : "") + ps[k].to_string();
  return s + "]";
}

/// Placements that fit the mesh and a rank-`rank` tensor (the same on every
/// rank: SPMD metadata, so no agreement is needed).
void check_placements(const Placements& ps, const Mesh& mesh, std::int64_t rank, const char* op) {
  if (static_cast<int>(ps.size()) != mesh.ndim()) {
    fail(ErrorKind::InvalidArgument, op, "placements ", placements_text(ps), " give ", ps.size(),
         " entries for a ", mesh.ndim(), "-axis mesh (", mesh.to_string(),
         "); give one placement per mesh axis");
  }
  for (std::size_t m = 0; m < ps.size(); ++m) {
    if (!ps[m].is_shard()) continue;
    if (ps[m].axis < 0 || ps[m].axis >= rank) {
      fail(ErrorKind::AxisOutOfBounds, op, "placement ", ps[m].to_string(), " on mesh axis ", m,
           " names tensor axis ", ps[m].axis, " of a rank-", rank, " tensor");
    }
    if (ps[m].block < 0) {
      fail(ErrorKind::InvalidArgument, op, "a block-cyclic block size is positive, got ",
           ps[m].block);
    }
    for (std::size_t k = 0; k < m; ++k) {
      if (ps[k].is_shard() && ps[k].axis == ps[m].axis) {
        fail(ErrorKind::InvalidArgument, op, "tensor axis ", ps[m].axis,
             " is sharded on mesh axes ", k, " and ", m, " (", placements_text(ps),
             "); shard each tensor axis over one mesh axis");
      }
    }
  }
}

/// The local shape of a global shape under the placements, on this rank.
Shape local_shape(const Shape& global, const Mesh& mesh, const Placements& ps) {
  Shape s = global;
  for (int m = 0; m < mesh.ndim(); ++m) {
    const Placement& p = ps[static_cast<std::size_t>(m)];
    if (!p.is_shard()) continue;
    auto& e = s[static_cast<std::size_t>(p.axis)];
    e = shard_extent(e, mesh.size(m), mesh.coordinate(m), p.block);
  }
  return s;
}

/// Each coordinate's extent along a tensor axis of extent n sharded over a
/// mesh axis of `parts` ranks.
std::vector<std::int64_t> extents(std::int64_t n, int parts, std::int64_t block) {
  std::vector<std::int64_t> v;
  for (int r = 0; r < parts; ++r) v.push_back(shard_extent(n, parts, r, block));
  return v;
}

/// A tensor's constant shape (a traced one must have constant extents).
Shape shape_of(const EagerTensor& t) {
  return t.shape();
}
Shape shape_of(const TracedTensor& t) {
  Shape s;
  for (const auto& d : t.shape()) {
    if (!d.is_constant()) {
      fail(ErrorKind::Unsupported, "dist", "a sharded traced value needs constant extents, got ",
           to_string(t.shape()), "; trace each rank's program with its sizes");
    }
    s.push_back(d.constant());
  }
  return s;
}

}  // namespace detail

namespace {

using detail::check_placements;
using detail::extents;
using detail::local_shape;
using detail::placements_text;
using detail::shape_of;

Tensor index_values(const std::vector<std::int64_t>& idx) {
  return Tensor::from_col_major({static_cast<std::int64_t>(idx.size())}, idx);
}
EagerTensor index_tensor(const EagerTensor& like, const std::vector<std::int64_t>& idx) {
  return like.runtime()->tensor(index_values(idx));
}
TracedTensor index_tensor(const TracedTensor&, const std::vector<std::int64_t>& idx) {
  return constant(index_values(idx));
}

/// This rank's part along `axis` (a slice, or a gather for block-cyclic).
template <class T>
T take_part(const T& x, std::int64_t axis, int parts, int coord, std::int64_t block) {
  const Shape xs = shape_of(x);
  const std::int64_t n = xs[static_cast<std::size_t>(axis)];
  const auto idx = shard_indices(n, parts, coord, block);
  if (block > 0) return index_select(x, axis, index_tensor(x, idx));
  Shape start(static_cast<std::size_t>(x.rank()), 0), limit = xs;
  start[static_cast<std::size_t>(axis)] = idx.empty() ? 0 : idx.front();
  limit[static_cast<std::size_t>(axis)] = idx.empty() ? 0 : idx.back() + 1;
  return slice(x, start, limit);
}

/// The rank-major order of a block-cyclic axis: rank 0's indices, rank 1's, ...
std::vector<std::int64_t> rank_major(std::int64_t n, int parts, std::int64_t block) {
  std::vector<std::int64_t> order;
  for (int r = 0; r < parts; ++r) {
    const auto idx = shard_indices(n, parts, r, block);
    order.insert(order.end(), idx.begin(), idx.end());
  }
  return order;
}

std::vector<std::int64_t> inverse(const std::vector<std::int64_t>& perm) {
  std::vector<std::int64_t> inv(perm.size());
  for (std::size_t k = 0; k < perm.size(); ++k)
    inv[static_cast<std::size_t>(perm[k])] = static_cast<std::int64_t>(k);
  return inv;
}

/// x on the first rank of a mesh axis, zeros on the others: a pending sum
/// of x. The zeros are -0 (the additive identity: the sum is x exactly, -0,
/// inf and NaN included; x * 0 made inf NaN), selected by a where() that
/// keeps x in the graph on every rank (its cotangent there is zero), so the
/// ranks record the same ops.
template <class T>
T zero_unless_first(const T& x, int coord) {
  if (coord == 0) return x;
  const Scalar neg_zero = is_complex(x.dtype()) ? Scalar(c128_t(-0.0, -0.0)) : Scalar(-0.0);
  return where(isnan(ones_like(x)), x, full_like(x, neg_zero));
}

/// One mesh axis's step: the local tensor from `from` to `to` on mesh axis m.
template <class T>
T step(const T& local, const Shape& global, const Mesh& mesh, int m, const Placement& from,
       const Placement& to) {
  const MPI_Comm comm = mesh.axis_comm(m).handle();
  const int parts = mesh.size(m), coord = mesh.coordinate(m);
  using K = Placement::Kind;
  if (from == to) return local;
  // One rank along this axis: every placement is the whole tensor.
  if (parts == 1) return local;
  if (from.kind == K::Shard && to.kind == K::Replicate) {
    const std::int64_t n = global[static_cast<std::size_t>(from.axis)];
    T g = detail::collective(
        detail::along_axis_params(Coll::AllGather, comm, from.axis, extents(n, parts, from.block)),
        local);
    if (from.block > 0)
      g = index_select(g, from.axis, index_tensor(g, inverse(rank_major(n, parts, from.block))));
    return g;
  }
  if (from.kind == K::Shard && to.kind == K::Shard && from.block == 0 && to.block == 0) {
    const std::int64_t na = global[static_cast<std::size_t>(from.axis)];
    const std::int64_t nc = global[static_cast<std::size_t>(to.axis)];
    return detail::collective(detail::all_to_all_params(comm, from.axis, extents(na, parts, 0),
                                                        to.axis, extents(nc, parts, 0)),
                              local);
  }
  if (from.kind == K::Replicate && to.kind == K::Shard) {
    return take_part(local, to.axis, parts, coord, to.block);
  }
  if (from.kind == K::Replicate && to.kind == K::Partial) return zero_unless_first(local, coord);
  if (from.kind == K::Partial && to.kind == K::Replicate) {
    return detail::collective(detail::all_reduce_params(comm), local);
  }
  if (from.kind == K::Partial && to.kind == K::Shard) {
    const std::int64_t n = global[static_cast<std::size_t>(to.axis)];
    T x = local;
    if (to.block > 0) x = index_select(x, to.axis, index_tensor(x, rank_major(n, parts, to.block)));
    return detail::collective(
        detail::along_axis_params(Coll::ReduceScatter, comm, to.axis, extents(n, parts, to.block)),
        x);
  }
  // Shard -> Partial, or Shard -> Shard with block-cyclic layouts: through Replicate.
  const T full = step(local, global, mesh, m, from, Replicate());
  return step(full, global, mesh, m, Replicate(), to);
}

/// The same dtype and global shape on every rank of the mesh: every rank
/// sees every rank's, so a mismatch raises the same error everywhere.
void agree_on_global(const Mesh& mesh, DType dtype, const Shape& shape, const char* op) {
  constexpr int kSlots = 10;  // dtype, rank, up to 8 extents
  std::int64_t mine[kSlots] = {};
  mine[0] = static_cast<std::int64_t>(dtype);
  mine[1] = static_cast<std::int64_t>(shape.size());
  for (std::size_t d = 0; d < shape.size() && d < kSlots - 2; ++d) mine[2 + d] = shape[d];
  const Communicator& comm = mesh.comm();
  std::vector<std::int64_t> all(static_cast<std::size_t>(comm.size()) * kSlots);
  detail::check_mpi(
      MPI_Allgather(mine, kSlots, MPI_INT64_T, all.data(), kSlots, MPI_INT64_T, comm.handle()), op);
  bool same = true;
  for (int r = 1; r < comm.size(); ++r) {
    same &= std::equal(all.begin(), all.begin() + kSlots, all.begin() + r * kSlots);
  }
  if (same) return;
  std::string ranks;
  for (int r = 0; r < comm.size(); ++r) {
    const std::int64_t* m = all.data() + static_cast<std::ptrdiff_t>(r) * kSlots;
    Shape s(static_cast<std::size_t>(std::min<std::int64_t>(m[1], kSlots - 2)), 0);
    for (std::size_t d = 0; d < s.size(); ++d) s[d] = m[2 + d];
    ranks += (r ? ", rank " : "rank ") + std::to_string(r) + " " +
             std::string(tenferro::name(static_cast<DType>(m[0]))) + shape_to_string(s.span());
  }
  fail(ErrorKind::ShapeMismatch, op, "the ranks pass different tensors (", ranks,
       "); every rank passes the same global dtype and shape");
}

}  // namespace

// ---- DTensor ---------------------------------------------------------------------------

template <class T>
BasicDTensor<T>::BasicDTensor(Shape global, Mesh mesh, Placements placements, T local)
    : shape_(std::move(global)),
      mesh_(std::make_shared<const Mesh>(std::move(mesh))),
      placements_(std::move(placements)),
      local_(std::move(local)) {
  check_placements(placements_, *mesh_, static_cast<std::int64_t>(shape_.size()), "dtensor");
  const Shape want = local_shape(shape_, *mesh_, placements_);
  if (local_.defined() && shape_of(local_) != want) {
    fail(ErrorKind::ShapeMismatch, "dtensor", "the local tensor is ",
         shape_to_string(shape_of(local_).span()), " but global ", shape_to_string(shape_.span()),
         " under ", placements_text(placements_), " gives this rank ",
         shape_to_string(want.span()));
  }
}

template <class T>
BasicDTensor<T>& BasicDTensor<T>::requires_grad_(bool on) requires std::same_as<T, EagerTensor> {
  local_.requires_grad_(on);
  return *this;
}

template <class T>
BasicDTensor<T> BasicDTensor<T>::grad() const requires std::same_as<T, EagerTensor> {
  if (!local_.has_grad()) return DTensor();
  NoGradGuard off;
  EagerTensor g = local_.grad().detach();
  // A Replicate leaf's cotangent is Partial (each rank's contribution): sum it.
  Placements ps = placements_;
  for (int m = 0; m < mesh_->ndim(); ++m) {
    auto& p = ps[static_cast<std::size_t>(m)];
    if (p.kind == Placement::Kind::Replicate) {
      g = detail::collective(detail::all_reduce_params(mesh_->axis_comm(m).handle()), g);
    } else if (p.kind == Placement::Kind::Partial) {
      p = Replicate();  // a Partial leaf's gradient is the same on every rank
    }
  }
  return DTensor(shape_, *mesh_, ps, g);
}

template <class T>
std::string BasicDTensor<T>::to_string() const {
  return "DTensor(" + std::string(tenferro::name(dtype())) + shape_to_string(shape_.span()) +
         ", mesh " + mesh_->to_string() + ", " + placements_text(placements_) + ")";
}

// ---- placement changes --------------------------------------------------------------------

template <class T>
BasicDTensor<T> distribute(const T& full, const Mesh& mesh, Placements placements) {
  if (!full.defined()) fail(ErrorKind::InvalidArgument, "distribute", "the tensor is undefined");
  check_placements(placements, mesh, full.rank(), "distribute");
  const Shape global = shape_of(full);
  agree_on_global(mesh, full.dtype(), global, "distribute");
  T local = full;
  for (int m = 0; m < mesh.ndim(); ++m) {
    local = step(local, global, mesh, m, Replicate(), placements[static_cast<std::size_t>(m)]);
  }
  return BasicDTensor<T>(global, mesh, std::move(placements), local);
}

DTensor scatter(const EagerRuntimePtr& rt, const Tensor& full, int root, const Mesh& mesh,
                Placements placements) {
  const Communicator& comm = mesh.comm();
  if (root < 0 || root >= comm.size()) {
    fail(ErrorKind::InvalidArgument, "scatter", "root ", root, " is not a rank of a ", comm.size(),
         "-rank mesh");
  }
  const bool me_root = comm.rank() == root;
  detail::agreed(comm.handle(), [&] {
    if (me_root && !full.defined())
      fail(ErrorKind::InvalidArgument, "scatter", "the root's tensor is undefined");
  });
  // The root's dtype and shape to every rank.
  std::int64_t meta[9] = {};
  if (me_root) {
    meta[0] = static_cast<std::int64_t>(full.dtype());
    meta[1] = full.rank();
    if (full.rank() > 7) meta[1] = -1;
    for (std::int64_t d = 0; d < full.rank() && d < 7; ++d) meta[2 + d] = full.dim(d);
  }
  detail::check_mpi(MPI_Bcast(meta, 9, MPI_INT64_T, root, comm.handle()), "scatter");
  if (meta[1] < 0)
    fail(ErrorKind::Unsupported, "scatter", "tensors of rank above 7 are not scattered");
  const DType dtype = static_cast<DType>(meta[0]);
  Shape global(static_cast<std::size_t>(meta[1]), 0);
  for (std::size_t d = 0; d < global.size(); ++d) global[d] = meta[2 + d];
  check_placements(placements, mesh, meta[1], "scatter");
  // The root cuts every rank's part (as distribute would on that rank) and sends it.
  const Shape mine = local_shape(global, mesh, placements);
  Tensor local = rt->backend().empty(mine.span(), dtype);
  const std::size_t item = itemsize(dtype);
  std::vector<int> counts, displs;
  std::vector<unsigned char> send;
  if (me_root) {
    NoGradGuard off;
    const EagerTensor whole = rt->tensor(full);
    for (int r = 0; r < comm.size(); ++r) {
      EagerTensor part = whole;
      const std::vector<int> coords = mesh.ndim() == 1
                                          ? std::vector<int>{r}
                                          : std::vector<int>{r / mesh.size(1), r % mesh.size(1)};
      for (int m = 0; m < mesh.ndim(); ++m) {
        const Placement& p = placements[static_cast<std::size_t>(m)];
        const int c = coords[static_cast<std::size_t>(m)];
        if (p.is_shard()) part = take_part(part, p.axis, mesh.size(m), c, p.block);
        if (p.kind == Placement::Kind::Partial) part = zero_unless_first(part, c);
      }
      const Tensor packed = part.value().contiguous();
      displs.push_back(static_cast<int>(send.size() / item));
      counts.push_back(static_cast<int>(packed.numel()));
      const auto* bytes = static_cast<const unsigned char*>(packed.raw_data());
      send.insert(send.end(), bytes, bytes + static_cast<std::size_t>(packed.numel()) * item);
    }
    // Every part but the root's own leaves it.
    detail::count_sent(send.size() -
                       static_cast<std::size_t>(counts[static_cast<std::size_t>(root)]) * item);
  }
  detail::check_mpi(MPI_Scatterv(send.data(), counts.data(), displs.data(), detail::mpi_type(dtype),
                                 local.raw_data(), static_cast<int>(local.numel()),
                                 detail::mpi_type(dtype), root, comm.handle()),
                    "scatter");
  return DTensor(global, mesh, std::move(placements), rt->tensor(local));
}

template <class T>
BasicDTensor<T> redistribute(const BasicDTensor<T>& x, Placements placements) {
  if (!x.defined()) fail(ErrorKind::InvalidArgument, "redistribute", "the tensor is undefined");
  check_placements(placements, x.mesh(), x.rank(), "redistribute");
  const Mesh& mesh = x.mesh();
  Placements cur = x.placements();
  T local = x.local();
  const auto sharded_elsewhere = [&](std::int64_t axis, int m) {
    for (int k = 0; k < mesh.ndim(); ++k)
      if (k != m && cur[static_cast<std::size_t>(k)].is_shard() &&
          cur[static_cast<std::size_t>(k)].axis == axis)
        return true;
    return false;
  };
  // A shard that would have to pass through Replicate (to a block-cyclic
  // layout, another axis sharded elsewhere, or Partial): the whole change as
  // one relayout, each element straight to its new holders.
  for (int m = 0; m < mesh.ndim(); ++m) {
    const Placement& from = cur[static_cast<std::size_t>(m)];
    const Placement& to = placements[static_cast<std::size_t>(m)];
    if (!from.is_shard() || from == to || to.kind == Placement::Kind::Replicate ||
        mesh.size(m) == 1) {
      continue;
    }
    if (to.is_shard() && from.block == 0 && to.block == 0 && !sharded_elsewhere(to.axis, m))
      continue;
    const detail::RelayoutParams params{
        mesh.comm().handle(), mesh.shape(), x.shape(), x.shape(), cur, placements};
    return BasicDTensor<T>(x.shape(), mesh, std::move(placements), detail::relayout(params, local));
  }
  // First what leaves a shard or sums (an all-to-all where it can move a
  // shard directly), then what cuts new shards, so no tensor axis is ever
  // sharded on two mesh axes at once.
  for (int m = 0; m < mesh.ndim(); ++m) {
    auto& from = cur[static_cast<std::size_t>(m)];
    const Placement& to = placements[static_cast<std::size_t>(m)];
    if (from == to) continue;
    if (from.is_shard()) {
      const bool direct =
          to.is_shard() && from.block == 0 && to.block == 0 && !sharded_elsewhere(to.axis, m);
      const Placement next = direct ? to : Replicate();
      local = step(local, x.shape(), mesh, m, from, next);
      from = next;
    } else if (from.kind == Placement::Kind::Partial && to.kind == Placement::Kind::Replicate) {
      local = step(local, x.shape(), mesh, m, from, to);
      from = to;
    }
  }
  for (int m = 0; m < mesh.ndim(); ++m) {
    auto& from = cur[static_cast<std::size_t>(m)];
    const Placement& to = placements[static_cast<std::size_t>(m)];
    if (from == to) continue;
    local = step(local, x.shape(), mesh, m, from, to);
    from = to;
  }
  return BasicDTensor<T>(x.shape(), mesh, std::move(placements), local);
}

template <class T>
T full_tensor(const BasicDTensor<T>& x) {
  return redistribute(x, Placements(static_cast<std::size_t>(x.mesh().ndim()), Replicate()))
      .local();
}

Tensor gather(const DTensor& x, int root) {
  if (root < 0 || root >= x.mesh().comm().size()) {
    fail(ErrorKind::InvalidArgument, "gather", "root ", root, " is not a rank of a ",
         x.mesh().comm().size(), "-rank mesh");
  }
  NoGradGuard off;
  const EagerTensor full =
      full_tensor(DTensor(x.shape(), x.mesh(), x.placements(), x.local().detach()));
  return x.mesh().comm().rank() == root ? full.value() : Tensor();
}

double item(const DTensor& x) {
  const EagerTensor full = full_tensor(x);
  if (full.numel() != 1) {
    fail(ErrorKind::ShapeMismatch, "item", "item() needs one element, the tensor has ",
         full.numel());
  }
  return full.item<double>();
}

void backward(const DTensor& loss) {
  if (!loss.defined()) fail(ErrorKind::InvalidArgument, "backward", "the loss is undefined");
  std::int64_t numel = 1;
  for (const auto e : loss.shape()) numel *= e;
  if (numel != 1) {
    fail(ErrorKind::ShapeMismatch, "backward",
         "the loss must have one element, its global shape is ",
         shape_to_string(loss.shape().span()));
  }
  for (const auto& p : loss.placements()) {
    if (p.is_shard()) {
      fail(ErrorKind::InvalidArgument, "backward",
           "the loss is sharded; sum it or redistribute it to Replicate first");
    }
  }
  // The seed is one value of the global computation: a Partial loss's
  // cotangent is the same on every rank, a Replicate loss's is Partial
  // (one on the first coordinate of each such mesh axis, zero elsewhere).
  double seed = 1.0;
  for (int m = 0; m < loss.mesh().ndim(); ++m) {
    if (loss.placements()[static_cast<std::size_t>(m)].kind == Placement::Kind::Replicate &&
        loss.mesh().coordinate(m) != 0)
      seed = 0.0;
  }
  const EagerTensor& l = loss.local();
  l.backward(full_like(l, Scalar(seed)).detach());
}

std::vector<TracedDTensor> grad(const TracedDTensor& loss, const std::vector<TracedDTensor>& wrt) {
  if (!loss.defined()) fail(ErrorKind::InvalidArgument, "dist::grad", "the loss is undefined");
  std::int64_t numel = 1;
  for (const auto e : loss.shape()) numel *= e;
  if (numel != 1 || std::any_of(loss.placements().begin(), loss.placements().end(),
                                [](const Placement& p) { return p.is_shard(); })) {
    fail(ErrorKind::ShapeMismatch, "dist::grad",
         "the loss must be one unsharded element; sum it first");
  }
  double seed = 1.0;  // as backward(): a Replicate loss's cotangent is Partial
  for (int m = 0; m < loss.mesh().ndim(); ++m) {
    if (loss.placements()[static_cast<std::size_t>(m)].kind == Placement::Kind::Replicate &&
        loss.mesh().coordinate(m) != 0)
      seed = 0.0;
  }
  const TracedTensor& l = loss.local();
  const TracedTensor ct = traced_full(l.shape(), Scalar(seed), l.dtype());
  std::vector<TracedTensor> locals;
  for (const auto& w : wrt) locals.push_back(w.local());
  const auto cts = vjp_many({l}, {ct}, locals);
  std::vector<TracedDTensor> out;
  for (std::size_t k = 0; k < wrt.size(); ++k) {
    const TracedDTensor& w = wrt[k];
    TracedTensor g = cts[k] ? *cts[k] : zeros_like(w.local());
    Placements ps = w.placements();
    for (int m = 0; m < w.mesh().ndim(); ++m) {
      auto& p = ps[static_cast<std::size_t>(m)];
      if (p.kind == Placement::Kind::Replicate && w.mesh().size(m) > 1) {
        g = detail::collective(detail::all_reduce_params(w.mesh().axis_comm(m).handle()), g);
      } else if (p.kind == Placement::Kind::Partial) {
        p = Replicate();
      }
    }
    out.emplace_back(w.shape(), w.mesh(), ps, g);
  }
  return out;
}

#define TENFERRO_DIST_INSTANTIATE(T)                                         \
  template class BasicDTensor<T>;                                            \
  template BasicDTensor<T> distribute(const T&, const Mesh&, Placements);    \
  template BasicDTensor<T> redistribute(const BasicDTensor<T>&, Placements); \
  template T full_tensor(const BasicDTensor<T>&);
TENFERRO_DIST_INSTANTIATE(EagerTensor)
TENFERRO_DIST_INSTANTIATE(TracedTensor)
#undef TENFERRO_DIST_INSTANTIATE

}  // namespace tenferro::dist
