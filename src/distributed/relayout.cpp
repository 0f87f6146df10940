// The relayout collective (relayout.hpp): a reshape and a change of
// placements as one all-to-all over the mesh's communicator.
//
// Every rank walks its local elements in local column-major order, which is
// increasing global (column-major) order under contiguous and block-cyclic
// shards alike, and sends each to the ranks that hold it afterwards; every
// rank walks its local result in the same order and records where each
// element comes from. So each pair of ranks lists the elements it exchanges
// in the same order, and only values travel. Per mesh axis, with "own" the
// coordinate a Shard gives an index:
//
//   from \ to   Shard                  Replicate             Partial
//   Shard       own(in) -> own(out)    own(in) -> every      own(in) -> itself
//   Replicate   own(out) -> itself     c -> c                0 -> 0, others 0
//   Partial     every -> own(out), +   every -> every, +     c -> c
//
// ("+": the receiver sums what the ranks along that axis send). The transpose
// of each entry is the entry of the cotangent placements (Shard stays,
// Replicate and Partial swap), read backwards: the table is closed under it.

#include "distributed/relayout.hpp"

#include <algorithm>
#include <complex>
#include <cstring>
#include <numeric>

#include "distributed/internal.hpp"
#include "tenferro/ad/ops.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/runtime/module.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"

namespace tenferro::dist::detail {

bool operator==(const RelayoutParams& a, const RelayoutParams& b) {
  return a.comm == b.comm && a.mesh == b.mesh && a.in_shape == b.in_shape &&
         a.out_shape == b.out_shape && a.in == b.in && a.out == b.out;
}

std::size_t hash_value(const RelayoutParams& p) {
  std::size_t h = comm_key(p.comm);
  for (const int m : p.mesh) h = hash_combine(h, static_cast<std::size_t>(m));
  for (const auto e : p.in_shape) h = hash_combine(h, static_cast<std::size_t>(e));
  for (const auto e : p.out_shape) h = hash_combine(h, static_cast<std::size_t>(e) + 1);
  for (const Placements* ps : {&p.in, &p.out}) {
    for (const auto& q : *ps) {
      h = hash_combine(h, static_cast<std::size_t>(q.kind));
      h = hash_combine(h, static_cast<std::size_t>(q.axis + 1));
      h = hash_combine(h, static_cast<std::size_t>(q.block));
    }
  }
  return h;
}

namespace {

using K = Placement::Kind;

std::vector<int> coords_of(int rank, const std::vector<int>& mesh) {
  if (mesh.size() == 1) return {rank};
  return {rank / mesh[1], rank % mesh[1]};
}

Shape local_shape_at(const Shape& global, const std::vector<int>& mesh, const Placements& ps,
                     const std::vector<int>& coords) {
  Shape s = global;
  for (std::size_t m = 0; m < mesh.size(); ++m) {
    if (!ps[m].is_shard()) continue;
    const auto a = static_cast<std::size_t>(ps[m].axis);
    s[a] = shard_extent(global[a], mesh[m], coords[m], ps[m].block);
  }
  return s;
}

Placement cotangent_of(const Placement& p) {
  if (p.kind == K::Replicate) return Partial();
  if (p.kind == K::Partial) return Replicate();
  return p;
}

class RelayoutOp final : public ExtensionOpWithParams<RelayoutOp, RelayoutParams>,
                         public SelfInstallingOp,
                         public ad::RuleCarryingOp {
 public:
  static constexpr std::string_view kFamily = "tenferro.dist.relayout.v1";
  explicit RelayoutOp(RelayoutParams p) : ExtensionOpWithParams(std::move(p)) {
    int me = 0;
    MPI_Comm_rank(params().comm, &me);
    coords_ = coords_of(me, params().mesh);
  }
  const std::vector<int>& coords() const { return coords_; }
  std::size_t input_count() const override { return 1; }
  std::size_t output_count() const override { return 1; }
  std::string describe() const override { return std::string(kFamily); }
  InferenceResult infer(std::span<const TensorMeta> in) const override {
    TensorMeta m = in[0];
    const Shape s = local_shape_at(params().out_shape, params().mesh, params().out, coords_);
    m.shape = to_sym_shape(s.span());
    InferenceResult r;
    r.outputs.push_back(std::move(m));
    return r;
  }
  ExtensionModulePtr module_for(const EngineRegistration& engine) const override;
  const ad::RuleSet& ad_rules() const override;

 private:
  std::vector<int> coords_;
};

/// Column-major strides of a global shape.
std::vector<std::int64_t> strides_of(const Shape& s) {
  std::vector<std::int64_t> st(s.size(), 1);
  for (std::size_t k = 1; k < s.size(); ++k) st[k] = st[k - 1] * s[k - 1];
  return st;
}

/// Per mesh axis sharding `ps`: the owner coordinate of each index of the
/// sharded tensor axis, and the end of the run of indices with that owner
/// (both empty for a mesh axis that does not shard).
struct Owners {
  std::vector<std::vector<int>> owner;
  std::vector<std::vector<std::int64_t>> run_end;
};

Owners owners(const Shape& g, const std::vector<int>& mesh, const Placements& ps) {
  Owners o;
  o.owner.resize(mesh.size());
  o.run_end.resize(mesh.size());
  for (std::size_t m = 0; m < mesh.size(); ++m) {
    if (!ps[m].is_shard()) continue;
    const std::int64_t n = g[static_cast<std::size_t>(ps[m].axis)];
    auto& own = o.owner[m];
    own.assign(static_cast<std::size_t>(n), 0);
    for (int r = 0; r < mesh[m]; ++r)
      for (const auto i : shard_indices(n, mesh[m], r, ps[m].block))
        own[static_cast<std::size_t>(i)] = r;
    auto& end = o.run_end[m];
    end.assign(static_cast<std::size_t>(n), n);
    for (std::int64_t i = n - 2; i >= 0; --i) {
      const auto k = static_cast<std::size_t>(i);
      end[k] = own[k + 1] == own[k] ? end[k + 1] : i + 1;
    }
  }
  return o;
}

/// Per tensor axis, the global index of each local position on `coords`.
std::vector<std::vector<std::int64_t>> global_indices(const Shape& g, const std::vector<int>& mesh,
                                                      const Placements& ps,
                                                      const std::vector<int>& coords) {
  std::vector<std::vector<std::int64_t>> idx(g.size());
  for (std::size_t k = 0; k < g.size(); ++k) {
    idx[k].resize(static_cast<std::size_t>(g[k]));
    std::iota(idx[k].begin(), idx[k].end(), std::int64_t{0});
  }
  for (std::size_t m = 0; m < mesh.size(); ++m) {
    if (!ps[m].is_shard()) continue;
    const auto a = static_cast<std::size_t>(ps[m].axis);
    idx[a] = shard_indices(g[a], mesh[m], coords[m], ps[m].block);
  }
  return idx;
}

constexpr int kAll = -1;   // every coordinate of the mesh axis
constexpr int kNone = -2;  // no coordinate: nothing to send, or a zero to keep

/// Calls fn(rank) for every rank whose coordinate on each mesh axis is
/// spec[m] (kAll: each of them); nothing when a spec is kNone.
template <class F>
void for_ranks(const int (&spec)[2], const std::vector<int>& mesh, F&& fn) {
  if (spec[0] == kNone || (mesh.size() == 2 && spec[1] == kNone)) return;
  const int lo0 = spec[0] == kAll ? 0 : spec[0], hi0 = spec[0] == kAll ? mesh[0] : spec[0] + 1;
  if (mesh.size() == 1) {
    for (int c = lo0; c < hi0; ++c) fn(c);
    return;
  }
  const int lo1 = spec[1] == kAll ? 0 : spec[1], hi1 = spec[1] == kAll ? mesh[1] : spec[1] + 1;
  for (int c0 = lo0; c0 < hi0; ++c0)
    for (int c1 = lo1; c1 < hi1; ++c1) fn(c0 * mesh[1] + c1);
}

/// Walks the local tensor of shape `local` in column-major order in runs of
/// elements consecutive both locally and globally (along axis 0), calling
/// fn(position, global column-major linear index, length) per run.
template <class F>
void walk(const Shape& local, const std::vector<std::vector<std::int64_t>>& gidx,
          const std::vector<std::int64_t>& stride, F&& fn) {
  std::int64_t n = 1;
  for (const auto e : local) n *= e;
  if (n == 0) return;
  if (local.empty()) {
    fn(0, 0, 1);
    return;
  }
  const std::int64_t n0 = local[0];
  const auto& g0 = gidx[0];
  std::vector<std::int64_t> at(local.size(), 0);
  for (std::int64_t pos = 0; pos < n; pos += n0) {
    std::int64_t base = 0;
    for (std::size_t k = 1; k < local.size(); ++k)
      base += gidx[k][static_cast<std::size_t>(at[k])] * stride[k];
    for (std::int64_t i = 0; i < n0;) {
      std::int64_t j = i + 1;
      while (j < n0 && g0[static_cast<std::size_t>(j)] == g0[static_cast<std::size_t>(j - 1)] + 1)
        ++j;
      fn(pos + i, base + g0[static_cast<std::size_t>(i)], j - i);
      i = j;
    }
    for (std::size_t k = 1; k < local.size() && ++at[k] == local[k]; ++k) at[k] = 0;
  }
}

/// A run of local positions [pos, pos + length).
struct Run {
  std::int64_t pos = 0, length = 0;
};

/// out[i] += in[i] for one element of `dtype`.
void add_into(unsigned char* out, const unsigned char* in, DType dtype) {
  const auto add = [&](auto zero) {
    using V = decltype(zero);
    V a, b;
    std::memcpy(&a, out, sizeof(V));
    std::memcpy(&b, in, sizeof(V));
    a = a + b;
    std::memcpy(out, &a, sizeof(V));
  };
  switch (dtype) {
    case DType::F32:
      return add(0.0f);
    case DType::F64:
      return add(0.0);
    case DType::C64:
      return add(std::complex<float>{});
    case DType::C128:
      return add(std::complex<double>{});
    case DType::I32:
      return add(std::int32_t{0});
    case DType::I64:
      return add(std::int64_t{0});
    case DType::Bool:
      *out = static_cast<unsigned char>(*out | *in);
      return;
  }
}

Tensor run_relayout(const RelayoutOp& op, const Tensor& in, Backend& backend) {
  const RelayoutParams& p = op.params();
  const std::string name(RelayoutOp::kFamily);
  const std::vector<int>& me = op.coords();
  const std::size_t nd = p.mesh.size();
  const Shape want = local_shape_at(p.in_shape, p.mesh, p.in, me);
  agreed(p.comm, [&] {
    if (in.shape() != want) {
      fail(ErrorKind::ShapeMismatch, name, "the local tensor is ",
           shape_to_string(in.shape().span()), " but the layout gives this rank ",
           shape_to_string(want.span()), "; every rank must hold its own part");
    }
  });
  int lo = static_cast<int>(in.dtype()), hi = lo;
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &lo, 1, MPI_INT, MPI_MIN, p.comm), name.c_str());
  check_mpi(MPI_Allreduce(MPI_IN_PLACE, &hi, 1, MPI_INT, MPI_MAX, p.comm), name.c_str());
  agree(p.comm, lo == hi
                    ? std::nullopt
                    : std::optional<Error>(Error(ErrorKind::DTypeMismatch, name,
                                                 "the ranks' local tensors differ in dtype; "
                                                 "every rank must hold a part of one tensor")));
  const Tensor x = in.contiguous();
  const DType dtype = x.dtype();
  const std::size_t item = itemsize(dtype);
  const int ranks = std::accumulate(p.mesh.begin(), p.mesh.end(), 1, std::multiplies<>());
  const auto stride_in = strides_of(p.in_shape), stride_out = strides_of(p.out_shape);
  const auto own_in = owners(p.in_shape, p.mesh, p.in);
  const auto own_out = owners(p.out_shape, p.mesh, p.out);
  // The index of a global linear position along one tensor axis.
  const auto index = [](std::int64_t linear, std::int64_t stride, std::int64_t extent) {
    return static_cast<std::size_t>((linear / stride) % extent);
  };

  // Send: each run of local elements to the ranks that hold it afterwards,
  // cut where an owner after changes.
  std::vector<std::vector<unsigned char>> send(static_cast<std::size_t>(ranks));
  const auto* src = static_cast<const unsigned char*>(x.raw_data());
  walk(x.shape(), global_indices(p.in_shape, p.mesh, p.in, me), stride_in,
       [&](std::int64_t pos, std::int64_t linear, std::int64_t len) {
         while (len > 0) {
           std::int64_t take = len;
           int spec[2] = {0, 0};
           for (std::size_t m = 0; m < nd; ++m) {
             const Placement& a = p.in[m];
             const Placement& b = p.out[m];
             if (b.is_shard()) {
               const auto axis = static_cast<std::size_t>(b.axis);
               const std::size_t o = index(linear, stride_out[axis], p.out_shape[axis]);
               const int owner = own_out.owner[m][o];
               take = std::min(
                   take, (own_out.run_end[m][o] - static_cast<std::int64_t>(o)) * stride_out[axis] -
                             linear % stride_out[axis]);
               spec[m] = a.kind == K::Replicate ? (owner == me[m] ? owner : kNone) : owner;
             } else if (b.kind == K::Replicate) {
               spec[m] = a.kind == K::Replicate ? me[m] : kAll;
             } else {
               spec[m] = a.kind == K::Replicate ? (me[m] == 0 ? 0 : kNone) : me[m];
             }
           }
           const unsigned char* v = src + static_cast<std::size_t>(pos) * item;
           const std::size_t bytes = static_cast<std::size_t>(take) * item;
           for_ranks(spec, p.mesh, [&](int r) {
             auto& buf = send[static_cast<std::size_t>(r)];
             buf.insert(buf.end(), v, v + bytes);
           });
           pos += take;
           linear += take;
           len -= take;
         }
       });

  // Receive: where each run of the local result comes from, cut where an
  // owner before changes.
  const Shape out_local = local_shape_at(p.out_shape, p.mesh, p.out, me);
  std::vector<std::vector<Run>> from(static_cast<std::size_t>(ranks));
  std::vector<std::size_t> from_bytes(from.size(), 0);
  bool sums = false;
  for (std::size_t m = 0; m < nd; ++m)
    sums |= p.in[m].kind == K::Partial && p.out[m].kind != K::Partial;
  walk(out_local, global_indices(p.out_shape, p.mesh, p.out, me), stride_out,
       [&](std::int64_t pos, std::int64_t linear, std::int64_t len) {
         while (len > 0) {
           std::int64_t take = len;
           int spec[2] = {0, 0};
           for (std::size_t m = 0; m < nd; ++m) {
             const Placement& a = p.in[m];
             const Placement& b = p.out[m];
             if (a.is_shard()) {
               const auto axis = static_cast<std::size_t>(a.axis);
               const std::size_t i = index(linear, stride_in[axis], p.in_shape[axis]);
               const int owner = own_in.owner[m][i];
               take = std::min(
                   take, (own_in.run_end[m][i] - static_cast<std::int64_t>(i)) * stride_in[axis] -
                             linear % stride_in[axis]);
               spec[m] = b.kind == K::Partial ? (owner == me[m] ? owner : kNone) : owner;
             } else if (a.kind == K::Replicate) {
               spec[m] = b.kind == K::Partial ? (me[m] == 0 ? 0 : kNone) : me[m];
             } else {
               spec[m] = b.kind == K::Partial ? me[m] : kAll;
             }
           }
           for_ranks(spec, p.mesh, [&](int r) {
             from[static_cast<std::size_t>(r)].push_back({pos, take});
             from_bytes[static_cast<std::size_t>(r)] += static_cast<std::size_t>(take) * item;
           });
           pos += take;
           linear += take;
           len -= take;
         }
       });

  // Exchange, after checking that each pair agrees on its count.
  std::vector<int> scount(static_cast<std::size_t>(ranks)), sdispl(scount.size());
  std::vector<int> rcount(scount.size()), rdispl(scount.size()), expect(scount.size());
  std::vector<unsigned char> sendbuf;
  std::uint64_t sent = 0;
  int my_rank = 0;
  MPI_Comm_rank(p.comm, &my_rank);
  for (std::size_t r = 0; r < send.size(); ++r) {
    if (send[r].size() > static_cast<std::size_t>(INT32_MAX) ||
        from_bytes[r] > static_cast<std::size_t>(INT32_MAX)) {
      fail(ErrorKind::Unsupported, name,
           "a block of more than 2^31 bytes between two ranks; "
           "use more ranks or smaller tensors");
    }
    sdispl[r] = static_cast<int>(sendbuf.size());
    scount[r] = static_cast<int>(send[r].size());
    sendbuf.insert(sendbuf.end(), send[r].begin(), send[r].end());
    if (static_cast<int>(r) != my_rank) sent += send[r].size();
    expect[r] = static_cast<int>(from_bytes[r]);
    std::vector<unsigned char>().swap(send[r]);
  }
  check_mpi(MPI_Alltoall(scount.data(), 1, MPI_INT, rcount.data(), 1, MPI_INT, p.comm),
            name.c_str());
  std::optional<Error> mismatch;
  if (rcount != expect) {
    mismatch = Error(ErrorKind::Internal, name,
                     "the ranks disagree on what to exchange (a layout computed differently)");
  }
  agree(p.comm, mismatch);
  std::size_t total = 0;
  for (std::size_t r = 0; r < rcount.size(); ++r) {
    rdispl[r] = static_cast<int>(total);
    total += static_cast<std::size_t>(rcount[r]);
  }
  std::vector<unsigned char> recv(total);
  check_mpi(MPI_Alltoallv(sendbuf.data(), scount.data(), sdispl.data(), MPI_BYTE, recv.data(),
                          rcount.data(), rdispl.data(), MPI_BYTE, p.comm),
            name.c_str());
  count_sent(sent);

  Tensor out = backend.empty(out_local.span(), dtype);
  backend.fill(out, Scalar(0.0));
  auto* dst = static_cast<unsigned char*>(out.raw_data());
  for (std::size_t r = 0; r < from.size(); ++r) {
    const unsigned char* v = recv.data() + rdispl[r];
    for (const Run& run : from[r]) {
      unsigned char* o = dst + static_cast<std::size_t>(run.pos) * item;
      const std::size_t bytes = static_cast<std::size_t>(run.length) * item;
      if (sums) {
        for (std::size_t k = 0; k < bytes; k += item) add_into(o + k, v + k, dtype);
      } else {
        std::memcpy(o, v, bytes);
      }
      v += bytes;
    }
  }
  return out;
}

ExtensionModulePtr RelayoutOp::module_for(const EngineRegistration& engine) const {
  static const ModulesByEngine modules([](const EngineId& id) {
    auto module = std::make_shared<SimpleModule>("tenferro.dist.relayout");
    module->family<RelayoutOp>(
        [](const RelayoutOp& op, ExecutionScope& scope, ExtensionCaches&,
           std::span<const Tensor> inputs) {
          Backend& backend = scope.backend();
          if (backend.kind() != "cpu") {
            fail(ErrorKind::Unsupported, std::string(RelayoutOp::kFamily),
                 "the relayout moves host memory; this engine's backend is ", backend.kind());
          }
          return std::vector<Tensor>{run_relayout(op, inputs[0], backend)};
        },
        nullptr, id);
    return module;
  });
  return modules.get(engine.id());
}

RelayoutParams transpose_of(const RelayoutParams& p) {
  RelayoutParams t = p;
  std::swap(t.in_shape, t.out_shape);
  t.in.clear();
  t.out.clear();
  for (const auto& q : p.out) t.in.push_back(cotangent_of(q));
  for (const auto& q : p.in) t.out.push_back(cotangent_of(q));
  return t;
}

std::vector<ad::MaybeVal> relayout_jvp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> t) {
  if (!t[0]) return {std::nullopt};
  const auto& op = static_cast<const RelayoutOp&>(a.op);
  const ad::Val in[1] = {*t[0]};
  return {a.emitter.emit1(std::make_shared<const RelayoutOp>(op.params()), in)};
}

std::vector<ad::MaybeVal> relayout_vjp(const ad::RuleArgs& a, std::span<const ad::MaybeVal> ct) {
  if (!ct[0]) return {std::nullopt};
  const auto& op = static_cast<const RelayoutOp&>(a.op);
  const ad::Val in[1] = {*ct[0]};
  return {a.emitter.emit1(std::make_shared<const RelayoutOp>(transpose_of(op.params())), in)};
}

const ad::RuleSet& RelayoutOp::ad_rules() const {
  static const ad::RuleSet r = [] {
    ad::RuleSet s;
    s.jvp = relayout_jvp;
    s.vjp = relayout_vjp;
    s.residuals = ad::Residuals::none();
    return s;
  }();
  return r;
}

template <class T>
T apply_relayout(const RelayoutParams& params, const T& x) {
  const auto op = std::make_shared<const RelayoutOp>(params);
  const T in[1] = {x};
  return tenferro::apply<T>(op, std::span<const T>(in))[0];
}

}  // namespace

EagerTensor relayout(const RelayoutParams& params, const EagerTensor& x) {
  return apply_relayout(params, x);
}

TracedTensor relayout(const RelayoutParams& params, const TracedTensor& x) {
  return apply_relayout(params, x);
}

}  // namespace tenferro::dist::detail
