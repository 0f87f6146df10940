// Collectives as eager extension ops (collectives.hpp): all-gather,
// reduce-scatter, all-reduce and all-to-all along one tensor axis over one
// communicator, and the broadcast of a panel of one rank's local tensor with
// its transpose, a reduction into that panel. Each is linear: its jvp is
// itself on the tangent, its vjp its transpose (all-gather <-> reduce-scatter,
// all-reduce <-> all-reduce, all-to-all <-> the reverse all-to-all,
// broadcast <-> reduce). Each agrees on its inputs across the ranks before
// moving data.

#include "distributed/collectives.hpp"

#include <numeric>

#include "distributed/internal.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/module.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::dist::detail {

namespace {

constexpr std::string_view family_of(Coll k) {
  switch (k) {
    case Coll::AllGather:
      return "tenferro.dist.all_gather.v1";
    case Coll::ReduceScatter:
      return "tenferro.dist.reduce_scatter.v1";
    case Coll::AllReduce:
      return "tenferro.dist.all_reduce.v1";
    case Coll::AllToAll:
      return "tenferro.dist.all_to_all.v1";
    case Coll::Broadcast:
      return "tenferro.dist.broadcast.v1";
    case Coll::Reduce:
      break;
  }
  return "tenferro.dist.reduce.v1";
}

std::int64_t total(const std::vector<std::int64_t>& v) {
  return std::accumulate(v.begin(), v.end(), std::int64_t{0});
}

std::vector<std::int64_t> offsets(const std::vector<std::int64_t>& counts) {
  std::vector<std::int64_t> off(counts.size() + 1, 0);
  for (std::size_t r = 0; r < counts.size(); ++r) off[r + 1] = off[r] + counts[r];
  return off;
}

class CollectiveOp final : public ExtensionOp, public SelfInstallingOp, public ad::RuleCarryingOp {
 public:
  explicit CollectiveOp(CollParams p) : family_(std::string(family_of(p.kind))), p_(std::move(p)) {
    int me = 0;
    MPI_Comm_rank(p_.comm, &me);
    me_ = static_cast<std::size_t>(me);
  }
  const CollParams& params() const { return p_; }
  std::size_t me() const { return me_; }
  const FamilyId& family_id() const override { return family_; }
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  std::size_t hash() const override {
    std::size_t h =
        hash_combine(std::hash<std::string_view>{}(family_of(p_.kind)), comm_key(p_.comm));
    h = hash_combine(h, static_cast<std::size_t>(p_.axis));
    h = hash_combine(h, static_cast<std::size_t>(p_.axis2));
    for (const auto c : p_.counts) h = hash_combine(h, static_cast<std::size_t>(c));
    for (const auto c : p_.counts2) h = hash_combine(h, static_cast<std::size_t>(c));
    h = hash_combine(h, static_cast<std::size_t>(p_.root));
    h = hash_combine(h, static_cast<std::size_t>(p_.start));
    return hash_combine(h, static_cast<std::size_t>(p_.length));
  }
  bool equals(const Op& other) const override {
    const auto* o = dynamic_cast<const CollectiveOp*>(&other);
    return o != nullptr && o->p_.kind == p_.kind && o->p_.comm == p_.comm &&
           o->p_.axis == p_.axis && o->p_.axis2 == p_.axis2 && o->p_.counts == p_.counts &&
           o->p_.counts2 == p_.counts2 && o->p_.root == p_.root && o->p_.start == p_.start &&
           o->p_.length == p_.length;
  }
  std::string describe() const override { return std::string(family_of(p_.kind)); }
  /// Lenient: a rank whose input does not fit still gets metadata, so that
  /// the executor's collective check, not a local throw, reports it.
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    InferenceResult r;
    TensorMeta m = in[0];
    auto set = [&](std::int64_t axis, std::int64_t extent) {
      if (axis >= 0 && axis < m.rank()) m.shape[static_cast<std::size_t>(axis)] = SymDim(extent);
    };
    switch (p_.kind) {
      case Coll::AllGather:
        set(p_.axis, total(p_.counts));
        break;
      case Coll::ReduceScatter:
        set(p_.axis, p_.counts[me_]);
        break;
      case Coll::AllReduce:
        break;
      case Coll::AllToAll:
        set(p_.axis, total(p_.counts));
        set(p_.axis2, p_.counts2[me_]);
        break;
      case Coll::Broadcast:
        set(p_.axis, p_.length);
        break;
      case Coll::Reduce:
        set(p_.axis, p_.counts[me_]);
        break;
    }
    r.outputs.push_back(std::move(m));
    return r;
  }
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override;
  const ad::RuleSet& ad_rules() const override;

 private:
  FamilyId family_;
  CollParams p_;
  std::size_t me_ = 0;
};

// ---- execution (host memory) ----------------------------------------------------------

/// The input's extent expected along `axis` and the op's name, checked on
/// every rank and agreed before any data moves.
void check_input(const CollectiveOp& op, const Tensor& x) {
  const CollParams& p = op.params();
  const std::string name(family_of(p.kind));
  auto extent = [&](std::int64_t axis, std::int64_t want, const char* what) {
    if (axis < 0 || axis >= x.rank()) {
      fail(ErrorKind::AxisOutOfBounds, name, what, " axis ", axis, " is out of range for a rank-",
           x.rank(), " local tensor");
    }
    if (x.dim(axis) != want) {
      fail(ErrorKind::ShapeMismatch, name, "the local tensor has extent ", x.dim(axis),
           " along axis ", axis, " but the layout gives this rank ", want,
           "; every rank must hold its own part of the same global tensor");
    }
  };
  switch (p.kind) {
    case Coll::AllGather:
      extent(p.axis, p.counts[op.me()], "the gathered");
      break;
    case Coll::ReduceScatter:
      extent(p.axis, total(p.counts), "the scattered");
      break;
    case Coll::AllReduce:
      break;
    case Coll::AllToAll:
      extent(p.axis, p.counts[op.me()], "the concatenated");
      extent(p.axis2, total(p.counts2), "the split");
      break;
    case Coll::Broadcast:
      extent(p.axis, p.counts[op.me()], "the broadcast");
      break;
    case Coll::Reduce:
      extent(p.axis, p.length, "the reduced");
      break;
  }
  if ((p.kind == Coll::ReduceScatter || p.kind == Coll::AllReduce || p.kind == Coll::Reduce) &&
      x.dtype() == DType::Bool) {
    fail(ErrorKind::DTypeMismatch, name, "a sum of bool tensors is not defined; convert first");
  }
}

/// The same dtype and the same extents off the moving axes on every rank
/// (a hash compared by min and max).
std::optional<Error> mismatch_across_ranks(const CollectiveOp& op, const Tensor& x) {
  const CollParams& p = op.params();
  std::uint64_t h =
      static_cast<std::uint64_t>(x.dtype()) * 1000003u + static_cast<std::uint64_t>(x.rank());
  for (std::int64_t d = 0; d < x.rank(); ++d) {
    if (d == p.axis || d == p.axis2) continue;
    h = h * 1000003u + static_cast<std::uint64_t>(x.dim(d));
  }
  std::uint64_t lo = 0, hi = 0;
  check_mpi(MPI_Allreduce(&h, &lo, 1, MPI_UINT64_T, MPI_MIN, p.comm), "collective check");
  check_mpi(MPI_Allreduce(&h, &hi, 1, MPI_UINT64_T, MPI_MAX, p.comm), "collective check");
  if (lo == hi) return std::nullopt;
  return Error(ErrorKind::ShapeMismatch, std::string(family_of(p.kind)),
               "the ranks' local tensors differ in dtype or in extents other than the moving "
               "axes (this rank: " +
                   std::string(tenferro::name(x.dtype())) + shape_to_string(x.shape().span()) +
                   "); every rank must hold a part of the same global tensor");
}

Shape with_extent(Shape s, std::int64_t axis, std::int64_t extent) {
  s[static_cast<std::size_t>(axis)] = extent;
  return s;
}

/// Elements per index of `axis` (the product of the other extents).
std::int64_t per_index(const Shape& s, std::int64_t axis) {
  std::int64_t n = 1;
  for (std::size_t d = 0; d < s.size(); ++d)
    if (static_cast<std::int64_t>(d) != axis) n *= s[d];
  return n;
}

/// Packs x's blocks along `axis` (rank r: [off[r], off[r+1])) into one
/// contiguous buffer, block after block, each block column-major.
std::vector<unsigned char> pack(const Tensor& x, std::int64_t axis,
                                const std::vector<std::int64_t>& off, Backend& backend) {
  const std::size_t item = itemsize(x.dtype());
  const std::int64_t per = per_index(x.shape(), axis);
  std::vector<unsigned char> buf(static_cast<std::size_t>(off.back() * per) * item);
  for (std::size_t r = 0; r + 1 < off.size(); ++r) {
    const std::int64_t len = off[r + 1] - off[r];
    if (len == 0) continue;
    const Shape bs = with_extent(x.shape(), axis, len);
    Tensor dst = Tensor::wrap(buf.data() + static_cast<std::size_t>(off[r] * per) * item, x.dtype(),
                              bs.span());
    backend.copy(x.slice(axis, off[r], off[r + 1]), dst);
  }
  return buf;
}

/// The inverse of pack: block r of `buf` into out's [off[r], off[r+1]) along `axis`.
void unpack(std::vector<unsigned char>& buf, const Tensor& out, std::int64_t axis,
            const std::vector<std::int64_t>& off, Backend& backend) {
  const std::size_t item = itemsize(out.dtype());
  const std::int64_t per = per_index(out.shape(), axis);
  for (std::size_t r = 0; r + 1 < off.size(); ++r) {
    const std::int64_t len = off[r + 1] - off[r];
    if (len == 0) continue;
    const Shape bs = with_extent(out.shape(), axis, len);
    Tensor src = Tensor::wrap(buf.data() + static_cast<std::size_t>(off[r] * per) * item,
                              out.dtype(), bs.span());
    backend.copy(src, out.slice(axis, off[r], off[r + 1]));
  }
}

std::vector<int> to_int(const std::vector<std::int64_t>& v, std::int64_t scale, const char* what) {
  std::vector<int> out;
  for (const auto x : v) {
    const std::int64_t n = x * scale;
    if (n > INT32_MAX) {
      fail(ErrorKind::Unsupported, what, "a block of ", n,
           " elements exceeds MPI's int counts; use more ranks or smaller tensors");
    }
    out.push_back(static_cast<int>(n));
  }
  return out;
}

Tensor run_collective(const CollectiveOp& op, const Tensor& in, Backend& backend) {
  const CollParams& p = op.params();
  const char* what = family_of(p.kind).data();
  agreed(p.comm, [&] { check_input(op, in); });
  agree(p.comm, mismatch_across_ranks(op, in));
  const Tensor x = in.contiguous();
  const MPI_Datatype type = mpi_type(x.dtype());
  const std::size_t item = itemsize(x.dtype());
  const std::size_t me = op.me();
  switch (p.kind) {
    case Coll::AllReduce: {
      Tensor out = backend.empty(x.shape().span(), x.dtype());
      check_mpi(MPI_Allreduce(x.raw_data(), out.raw_data(), static_cast<int>(x.numel()), type,
                              MPI_SUM, p.comm),
                what);
      // Bandwidth-optimal (reduce-scatter then all-gather): 2 (p-1)/p of it.
      int ranks = 1;
      MPI_Comm_size(p.comm, &ranks);
      const auto n = static_cast<std::uint64_t>(ranks);
      count_sent(2 * (n - 1) * static_cast<std::uint64_t>(x.numel()) * item / n);
      return out;
    }
    case Coll::AllGather: {
      const std::int64_t per = per_index(x.shape(), p.axis);
      const auto off = offsets(p.counts);
      const auto counts = to_int(p.counts, per, what);
      std::vector<int> displs;
      for (std::size_t r = 0; r < p.counts.size(); ++r)
        displs.push_back(static_cast<int>(off[r] * per));
      std::vector<unsigned char> buf(static_cast<std::size_t>(off.back() * per) * item);
      check_mpi(MPI_Allgatherv(x.raw_data(), counts[me], type, buf.data(), counts.data(),
                               displs.data(), type, p.comm),
                what);
      // This rank's part reaches every other rank.
      count_sent(static_cast<std::uint64_t>(counts[me]) * item * (counts.size() - 1));
      Tensor out = backend.empty(with_extent(x.shape(), p.axis, off.back()).span(), x.dtype());
      unpack(buf, out, p.axis, off, backend);
      return out;
    }
    case Coll::ReduceScatter: {
      const std::int64_t per = per_index(x.shape(), p.axis);
      const auto off = offsets(p.counts);
      std::vector<unsigned char> send = pack(x, p.axis, off, backend);
      const auto counts = to_int(p.counts, per, what);
      Tensor out = backend.empty(with_extent(x.shape(), p.axis, p.counts[me]).span(), x.dtype());
      check_mpi(
          MPI_Reduce_scatter(send.data(), out.raw_data(), counts.data(), type, MPI_SUM, p.comm),
          what);
      // The other ranks' parts of this rank's summand.
      count_sent(static_cast<std::uint64_t>((off.back() - p.counts[me]) * per) * item);
      return out;
    }
    case Coll::Broadcast: {
      // The root sends its panel; every rank receives it.
      const Shape shape = with_extent(x.shape(), p.axis, p.length);
      Tensor out = backend.empty(shape.span(), x.dtype());
      const bool root = me == static_cast<std::size_t>(p.root);
      if (root) backend.copy(x.slice(p.axis, p.start, p.start + p.length), out);
      // The panel reaches every other rank.
      count_sent(root ? static_cast<std::uint64_t>(out.numel()) * item * (p.counts.size() - 1) : 0);
      const auto n = to_int({out.numel()}, 1, what);
      check_mpi(MPI_Bcast(out.raw_data(), n[0], type, p.root, p.comm), what);
      return out;
    }
    case Coll::Reduce: {
      // Every rank's panel summed into the root's; zeros around it.
      const auto n = to_int({x.numel()}, 1, what);
      const bool root = me == static_cast<std::size_t>(p.root);
      std::vector<unsigned char> sum(root ? static_cast<std::size_t>(x.numel()) * item : 0);
      check_mpi(MPI_Reduce(x.raw_data(), root ? sum.data() : nullptr, n[0], type, MPI_SUM, p.root,
                           p.comm),
                what);
      Tensor out = backend.empty(with_extent(x.shape(), p.axis, p.counts[me]).span(), x.dtype());
      backend.fill(out, Scalar(0.0));
      if (root) {
        backend.copy(Tensor::wrap(sum.data(), x.dtype(), x.shape().span()),
                     out.slice(p.axis, p.start, p.start + p.length));
      }
      count_sent(root ? 0 : static_cast<std::uint64_t>(x.numel()) * item);
      return out;
    }
    case Coll::AllToAll:
      break;
  }
  // All-to-all: split along axis2 (rank r gets [off2[r], off2[r+1])), then
  // the received blocks join along axis in rank order.
  const auto off2 = offsets(p.counts2);
  const auto off = offsets(p.counts);
  std::vector<unsigned char> send = pack(x, p.axis2, off2, backend);
  const std::int64_t send_per = per_index(x.shape(), p.axis2);  // elements per split index
  const Shape out_shape =
      with_extent(with_extent(x.shape(), p.axis2, p.counts2[me]), p.axis, off.back());
  const std::int64_t recv_per = per_index(out_shape, p.axis);
  const auto scounts = to_int(p.counts2, send_per, what);
  const auto rcounts = to_int(p.counts, recv_per, what);
  std::vector<int> sdispl, rdispl;
  for (std::size_t r = 0; r < p.counts.size(); ++r) {
    sdispl.push_back(static_cast<int>(off2[r] * send_per));
    rdispl.push_back(static_cast<int>(off[r] * recv_per));
  }
  std::vector<unsigned char> recv(static_cast<std::size_t>(off.back() * recv_per) * item);
  check_mpi(MPI_Alltoallv(send.data(), scounts.data(), sdispl.data(), type, recv.data(),
                          rcounts.data(), rdispl.data(), type, p.comm),
            what);
  std::uint64_t sent = 0;
  for (std::size_t r = 0; r < scounts.size(); ++r)
    if (r != me) sent += static_cast<std::uint64_t>(scounts[r]) * item;
  count_sent(sent);
  Tensor out = backend.empty(out_shape.span(), x.dtype());
  unpack(recv, out, p.axis, off, backend);
  return out;
}

class Executor final : public PlanExecutor {
 public:
  explicit Executor(std::shared_ptr<const CollectiveOp> op) : op_(std::move(op)) {}
  std::vector<Tensor> execute(ExecutionContext& context, ExtensionCaches&,
                              std::span<const Tensor> inputs) const override {
    Backend& backend = context.backend();
    if (backend.kind() != "cpu") {
      fail(ErrorKind::Unsupported, std::string(op_->name()),
           "the collectives move host memory; this engine's backend is ", backend.kind());
    }
    return {run_collective(*op_, inputs[0], backend)};
  }

 private:
  std::shared_ptr<const CollectiveOp> op_;
};

class Engine final : public ExtensionEngine {
 public:
  PrepareOutcome prepare(const PrepareRequest& request) const override {
    const auto* op = dynamic_cast<const CollectiveOp*>(&request.op);
    if (op == nullptr) {
      fail(ErrorKind::InvalidArgument, std::string(request.op.name()),
           "invalid payload: the collective engine expects a collective op");
    }
    return Prepared{
        std::make_shared<const Executor>(std::make_shared<const CollectiveOp>(op->params()))};
  }
};

ExtensionModulePtr CollectiveOp::module_for(const EngineRegistration& engine) const {
  static const ModulesByEngine modules([](const EngineId& id) {
    auto module = std::make_shared<SimpleModule>("tenferro.dist.collectives");
    for (const Coll k : {Coll::AllGather, Coll::ReduceScatter, Coll::AllReduce, Coll::AllToAll,
                         Coll::Broadcast, Coll::Reduce}) {
      module->engine(FamilyId{std::string(family_of(k))}, id, std::make_shared<const Engine>());
    }
    return module;
  });
  return modules.get(engine.id());
}

// ---- AD ---------------------------------------------------------------------------------

CollParams transpose_of(const CollParams& p) {
  CollParams t = p;
  switch (p.kind) {
    case Coll::AllGather:
      t.kind = Coll::ReduceScatter;
      break;
    case Coll::ReduceScatter:
      t.kind = Coll::AllGather;
      break;
    case Coll::AllReduce:
      break;
    case Coll::AllToAll:
      std::swap(t.axis, t.axis2);
      std::swap(t.counts, t.counts2);
      break;
    case Coll::Broadcast:
      t.kind = Coll::Reduce;
      break;
    case Coll::Reduce:
      t.kind = Coll::Broadcast;
      break;
  }
  return t;
}

std::vector<ad::MaybeVal> coll_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  const auto& op = static_cast<const CollectiveOp&>(a.op);
  const ad::Val in[1] = {*t[0]};
  return {a.emitter.emit1(std::make_shared<const CollectiveOp>(op.params()), in)};
}

std::vector<ad::MaybeVal> coll_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  const auto& op = static_cast<const CollectiveOp&>(a.op);
  const ad::Val in[1] = {*ct[0]};
  return {a.emitter.emit1(std::make_shared<const CollectiveOp>(transpose_of(op.params())), in)};
}

const ad::RuleSet& CollectiveOp::ad_rules() const {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = coll_jvp;
    s.vjp = coll_vjp;
    s.residuals = ad::Residuals::none();
    return s;
  }();
  return r;
}

}  // namespace

template <class T>
T apply_collective(const CollParams& params, const T& x) {
  const auto op = std::make_shared<const CollectiveOp>(params);
  const T in[1] = {x};
  return tenferro::apply<T>(op, std::span<const T>(in))[0];
}

OpPtr collective_op(const CollParams& params) {
  return std::make_shared<const CollectiveOp>(params);
}

EagerTensor collective(const CollParams& params, const EagerTensor& x) {
  return apply_collective(params, x);
}

TracedTensor collective(const CollParams& params, const TracedTensor& x) {
  return apply_collective(params, x);
}

}  // namespace tenferro::dist::detail
