#pragma once
// Distributed tensors on MPI (SPMD: one process per rank, started by mpirun).
//
//   dist::Mesh mesh = dist::Mesh::line();                       // every rank of MPI_COMM_WORLD
//   dist::DTensor a = dist::distribute(rt->tensor(full), mesh, {dist::Shard(0)});
//   dist::DTensor s = dist::sum(a * a);                         // local sums, Partial
//   dist::backward(s);                                          // a's gradient, sharded like a
//
// A DTensor is a global shape, a mesh, one placement per mesh axis and the
// rank's local eager tensor. Placements:
//   Shard(axis)         the tensor axis split in contiguous blocks over the
//                       mesh axis (sizes differ by at most one, larger first);
//   Shard(axis, block)  block-cyclic: blocks of `block` indices dealt round robin;
//   Replicate()         the whole tensor on every rank of the mesh axis;
//   Partial()           a pending sum: the tensor is the sum of the ranks' locals.
// Ops run on the local tensors with the eager tier's ops, and move data with
// collectives that are eager extension ops, so backward(), grad, vjp and jvp
// work through them. The cotangent of a Shard value is sharded the same way,
// of a Replicate value Partial and of a Partial value Replicate: the
// transpose of an all-gather is a reduce-scatter, of an all-reduce an
// all-reduce (the broadcast of the summed cotangent), of an all-to-all the
// reverse all-to-all. Gradients come back placed like their leaves.
//
// Every check that depends on one rank's data agrees across the ranks before
// a collective runs: a bad shape on one rank raises the same typed error on
// every rank instead of leaving the others blocked. MPI errors become
// tenferro::Error kinds (Internal, naming the MPI error string).

#include <mpi.h>

#include <concepts>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <type_traits>
#include <vector>

#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/traced.hpp"

namespace tenferro {
struct EinsumLabels;  // tenferro/einsum/einsum.hpp
}  // namespace tenferro

namespace tenferro::dist {

/// Initialises MPI (thread level FUNNELED) unless already initialised; the
/// distributed calls do it on first use. MPI is finalised at process exit
/// when this call initialised it.
void ensure_initialized();

/// An MPI communicator. world() and handles passed in are borrowed; split()
/// makes a new one, which lives until MPI is finalised (its handle is never
/// reused for another group of ranks while ops and caches may name it).
class Communicator {
 public:
  static Communicator world();
  explicit Communicator(MPI_Comm comm);
  MPI_Comm handle() const { return comm_; }
  int rank() const { return rank_; }
  int size() const { return size_; }
  /// MPI_Comm_split: ranks with the same color form one communicator,
  /// ordered by key.
  Communicator split(int color, int key) const;
  void barrier() const;
  friend bool operator==(const Communicator& a, const Communicator& b) {
    return a.comm_ == b.comm_;
  }

 private:
  MPI_Comm comm_ = MPI_COMM_NULL;
  int rank_ = 0;
  int size_ = 1;
};

/// A 1-D or 2-D grid of the communicator's ranks, row-major: rank r sits at
/// (r / shape[1], r % shape[1]). Each mesh axis has the communicator of the
/// ranks that differ only along it.
class Mesh {
 public:
  /// shape's product must equal comm.size() (InvalidArgument otherwise).
  Mesh(Communicator comm, std::vector<int> shape);
  /// Every rank of `comm` on one axis.
  static Mesh line(Communicator comm = Communicator::world());
  int ndim() const { return static_cast<int>(shape_.size()); }
  int size(int axis) const { return shape_.at(static_cast<std::size_t>(axis)); }
  const std::vector<int>& shape() const { return shape_; }
  int coordinate(int axis) const { return coords_.at(static_cast<std::size_t>(axis)); }
  const Communicator& comm() const { return comm_; }
  const Communicator& axis_comm(int axis) const {
    return axis_comms_.at(static_cast<std::size_t>(axis));
  }
  std::string to_string() const;
  friend bool operator==(const Mesh& a, const Mesh& b) {
    return a.comm_ == b.comm_ && a.shape_ == b.shape_;
  }

 private:
  Communicator comm_;
  std::vector<int> shape_;
  std::vector<int> coords_;
  std::vector<Communicator> axis_comms_;
};

struct Placement {
  enum class Kind : unsigned char { Shard, Replicate, Partial };
  Kind kind = Kind::Replicate;
  std::int64_t axis = -1;  ///< the tensor axis (Shard)
  std::int64_t block = 0;  ///< block-cyclic block size (Shard; 0: contiguous blocks)
  bool is_shard() const { return kind == Kind::Shard; }
  std::string to_string() const;
  friend bool operator==(const Placement&, const Placement&) = default;
};
inline Placement Shard(std::int64_t axis, std::int64_t block = 0) {
  return {Placement::Kind::Shard, axis, block};
}
inline Placement Replicate() {
  return {Placement::Kind::Replicate, -1, 0};
}
inline Placement Partial() {
  return {Placement::Kind::Partial, -1, 0};
}
using Placements = std::vector<Placement>;

/// The global indices of tensor axis extent `n` that coordinate `rank` of a
/// mesh axis of `parts` ranks holds under a Shard placement, in local order.
std::vector<std::int64_t> shard_indices(std::int64_t n, int parts, int rank, std::int64_t block);
/// The number of them.
std::int64_t shard_extent(std::int64_t n, int parts, int rank, std::int64_t block);

/// Bytes this process sent in collectives (and how many it ran) since the
/// last reset: every distributed call reports its traffic here. Counted as
/// the payload of this rank's data that reaches other ranks: an all-gather of
/// a part L over p ranks (p-1) L, a reduce-scatter or an all-to-all the other
/// ranks' share of the input, an all-reduce 2 (p-1)/p of it (reduce-scatter
/// then all-gather), a broadcast (p-1) times the panel on its root, a
/// reduction the panel on every other rank, a scatter the other ranks' parts.
struct CommStats {
  std::uint64_t bytes_sent = 0;
  std::uint64_t collectives = 0;
};
CommStats comm_stats();
void reset_comm_stats();

/// A sharded tensor whose local part is a tensor of tier T: EagerTensor
/// (DTensor: runs now, backward() and grad) or TracedTensor (TracedDTensor:
/// builds each rank's traced program, with constant extents; dist::grad).
template <class T>
class BasicDTensor {
 public:
  BasicDTensor() = default;
  /// For the layer: a local tensor with its global metadata (checked).
  BasicDTensor(Shape global, Mesh mesh, Placements placements, T local);
  bool defined() const { return local_.defined(); }
  const Shape& shape() const { return shape_; }
  std::int64_t rank() const { return static_cast<std::int64_t>(shape_.size()); }
  DType dtype() const { return local_.dtype(); }
  const Mesh& mesh() const { return *mesh_; }
  const Placements& placements() const { return placements_; }
  const T& local() const { return local_; }
  std::string to_string() const;

  // ---- eager tier --------------------------------------------------------------------
  bool requires_grad() const requires std::same_as<T, EagerTensor> {
    return local_.requires_grad();
  }
  /// Marks the local tensor as a leaf that requires grad (every rank must).
  BasicDTensor& requires_grad_(bool on = true) requires std::same_as<T, EagerTensor>;
  /// The gradient accumulated into this leaf by backward(), placed like the
  /// leaf (a Replicate leaf's partial gradients are summed; a Partial leaf's
  /// gradient is Replicate); undefined before.
  BasicDTensor grad() const requires std::same_as<T, EagerTensor>;

 private:
  Shape shape_;
  std::shared_ptr<const Mesh> mesh_;
  Placements placements_;
  T local_;
};
using DTensor = BasicDTensor<EagerTensor>;
using TracedDTensor = BasicDTensor<TracedTensor>;

// Every function below taking a BasicDTensor<T> works in both tiers.

/// Places `full` (the same tensor on every rank, checked collectively) on the
/// mesh: each rank keeps its part. Differentiable (a slice per rank).
template <class T>
BasicDTensor<T> distribute(const T& full, const Mesh& mesh, Placements placements);
/// From `root`'s tensor (the others pass an undefined one): the root sends
/// each rank its part (MPI_Scatterv), an untracked tensor of `rt` on every
/// rank. Not differentiable (the data enter the computation here).
DTensor scatter(const EagerRuntimePtr& rt, const Tensor& full, int root, const Mesh& mesh,
                Placements placements);
/// The same global tensor under other placements (collectives chosen per
/// mesh axis: all-gather, reduce-scatter, all-reduce, all-to-all, local
/// slicing). Differentiable.
template <class T>
BasicDTensor<T> redistribute(const BasicDTensor<T>& x, Placements placements);
/// The whole tensor on every rank (Replicate on every mesh axis). Differentiable.
template <class T>
T full_tensor(const BasicDTensor<T>& x);
/// The whole tensor on `root` (undefined elsewhere). Not differentiable.
Tensor gather(const DTensor& x, int root);

// ---- ops ----------------------------------------------------------------------------
// Elementwise ops broadcast global shapes as NumPy does (right-aligned) and
// run locally when the placements agree. Otherwise, per mesh axis, the result
// is sharded like the first operand where it shards a full (not broadcast)
// axis, else like the second, else replicated (a pending sum of two pending
// sums under + and -), and each operand is redistributed to that: sharded
// where it has the axis, replicated where it is broadcast. A Partial operand
// of a product or quotient is summed first. Mismatched meshes, or shapes
// that do not broadcast, are refused naming both.
template <class T>
BasicDTensor<T> operator+(const BasicDTensor<T>& a, const BasicDTensor<T>& b);
template <class T>
BasicDTensor<T> operator-(const BasicDTensor<T>& a, const BasicDTensor<T>& b);
template <class T>
BasicDTensor<T> operator*(const BasicDTensor<T>& a, const BasicDTensor<T>& b);
template <class T>
BasicDTensor<T> operator/(const BasicDTensor<T>& a, const BasicDTensor<T>& b);
template <class T>
BasicDTensor<T> operator*(const BasicDTensor<T>& a, Scalar b);
template <class T>
BasicDTensor<T> operator-(const BasicDTensor<T>& a);
/// A unary elementwise function applied to the local tensor (sin, exp, ...);
/// a Partial input is summed first unless `linear`.
template <class T>
BasicDTensor<T> map(const BasicDTensor<T>& x,
                    const std::type_identity_t<std::function<T(const T&)>>& fn,
                    bool linear = false);
/// Sum over every axis: local sums, Partial on every mesh axis that shards
/// the tensor (redistribute to Replicate for the value on every rank).
template <class T>
BasicDTensor<T> sum(const BasicDTensor<T>& x);
/// Sum over `axes` (keepdim as in the eager sum): sharded axes become Partial.
template <class T>
BasicDTensor<T> sum(const BasicDTensor<T>& x, std::vector<std::int64_t> axes, bool keepdim = false);
/// Axes reordered (x.permute(perm) on each local tensor; no communication).
template <class T>
BasicDTensor<T> permute(const BasicDTensor<T>& x, std::vector<std::int64_t> perm);

/// The tensor with a new global shape (column-major order, as
/// tenferro::reshape), placed as `placements`. When every sharded axis
/// passes through untouched (its own group of axes whose extents' products
/// agree, onto one axis of the same extent; unit axes aside), each rank
/// reshapes its block and only a change of placements is redistributed;
/// otherwise (a sharded axis merged or split) one all-to-all sends each
/// element from its holder straight to its new holders (nothing gathered).
/// Any placements on either side, pending sums included. Differentiable.
template <class T>
BasicDTensor<T> reshape(const BasicDTensor<T>& x, Shape shape, Placements placements);

/// What a distributed einsum did: the bytes this rank sent (eager tier;
/// traced programs report theirs through comm_stats() when they run), and
/// per pairwise step what each mesh axis sharded ("i,k": mesh axis 0 sharded
/// label i, axis 1 label k; "-" replicated; "partial" kept a pending sum;
/// "summa(i,k)" the same sharding run as a panel loop).
/// model_bytes is the planner's estimate for the chosen steps: the
/// bandwidth-optimal volume per rank of the collectives they need (an
/// all-gather of a local part L over p ranks: (p-1) L; an all-to-all or a
/// reduce-scatter: (p-1)/p of the input; an all-reduce: twice that), the
/// lower bound bytes_sent is compared with.
struct EinsumReport {
  std::uint64_t bytes_sent = 0;
  double model_bytes = 0;
  std::vector<std::string> steps;
};
/// How a distributed einsum runs its steps.
struct EinsumOptions {
  /// A step whose choice gathers the contracted label of A along one mesh
  /// axis and of B along the other (two operands sharded on both axes of a
  /// 2-D mesh, as [Shard(i), Shard(j)] x [Shard(j), Shard(k)]) runs as SUMMA:
  /// panels of that label broadcast from their owners, one local product per
  /// panel, the same bytes as gathering both without holding either whole.
  /// false: gather both, then one local einsum.
  bool summa = true;
  /// The most indices of the contracted label in one SUMMA panel (a panel
  /// also ends where either operand's owner changes).
  std::int64_t summa_panel = 256;
};

/// Einstein summation over sharded operands ("ij,jk->ik"; letters, no
/// ellipsis or repeated labels within a term). The einsum family's planner
/// orders the pairwise contractions over the global shapes. Each step picks,
/// per mesh axis, which label that axis shards (a free label of one operand:
/// the other is replicated along that axis; a label both share and keep: a
/// batch; a label both contract: the result is Partial) or none, whichever
/// sends the fewest bytes to redistribute the operands, then contracts the
/// local tensors. Differentiable.
template <class T>
BasicDTensor<T> einsum(std::string_view equation, const std::vector<BasicDTensor<T>>& operands,
                       EinsumReport* report = nullptr, const EinsumOptions& options = {});
/// The same, taking a braced list of operands: einsum("ij,jk->ik", {a, b}).
inline DTensor einsum(std::string_view equation, const std::vector<DTensor>& operands,
                      EinsumReport* report = nullptr, const EinsumOptions& options = {}) {
  return einsum<EagerTensor>(equation, operands, report, options);
}
inline TracedDTensor einsum(std::string_view equation, const std::vector<TracedDTensor>& operands,
                            EinsumReport* report = nullptr, const EinsumOptions& options = {}) {
  return einsum<TracedTensor>(equation, operands, report, options);
}
/// The same with integer labels (EinsumLabels, as the einsum family takes
/// them: any number of labels; the output, when not given, is the labels
/// seen once, sorted).
template <class T>
BasicDTensor<T> einsum(const EinsumLabels& labels, const std::vector<BasicDTensor<T>>& operands,
                       EinsumReport* report = nullptr, const EinsumOptions& options = {});
/// einsum("ij,jk->ik", {a, b}).
template <class T>
BasicDTensor<T> matmul(const BasicDTensor<T>& a, const BasicDTensor<T>& b,
                       EinsumReport* report = nullptr, const EinsumOptions& options = {});

/// The value of a one-element tensor on every rank (summed when Partial).
double item(const DTensor& x);

/// Reverse mode from a real scalar DTensor (Replicate or Partial): seeds it
/// as one value of the global computation and accumulates into the leaves'
/// grad slots (read them with DTensor::grad()).
void backward(const DTensor& loss);

/// The traced tier's gradient of a real scalar with respect to sharded
/// values of the same program (seeded as backward() does), each placed like
/// its value. Compile the results into each rank's program.
std::vector<TracedDTensor> grad(const TracedDTensor& loss, const std::vector<TracedDTensor>& wrt);

}  // namespace tenferro::dist
