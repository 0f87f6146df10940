#include "trg_dist.hpp"

#include <algorithm>
#include <cmath>
#include <limits>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "tenferro/distributed/linalg.hpp"

namespace tf = tenferro;
namespace dist = tenferro::dist;

namespace ising {

namespace {

template <class T>
using DT = dist::BasicDTensor<T>;

tf::EagerTensor constant_like(const tf::EagerTensor& ref, const tf::Tensor& value) {
  return ref.runtime()->tensor(value);
}
tf::TracedTensor constant_like(const tf::TracedTensor&, const tf::Tensor& value) {
  return tf::constant(value);
}

std::int64_t local_numel(const tf::EagerTensor& x) {
  return x.numel();
}
std::int64_t local_numel(const tf::TracedTensor& x) {
  std::int64_t n = 1;
  for (const auto& e : x.shape()) n *= e.constant();  // sharded programs have constant extents
  return n;
}

std::string shape_text(const tf::Shape& shape) {
  std::ostringstream os;
  os << "[";
  for (std::size_t i = 0; i < shape.size(); ++i) os << (i ? "," : "") << shape[i];
  os << "]";
  return os.str();
}

template <class T>
void note(DistTrgMemory* memory, const DT<T>& x, const char* what) {
  if (memory == nullptr) return;
  const std::int64_t bytes = 8 * local_numel(x.local());
  std::int64_t global = 8;
  for (const auto e : x.shape()) global *= e;
  if (bytes > memory->largest_local_bytes) {
    memory->largest_local_bytes = bytes;
    memory->largest_local_what = std::string(what) + " " + shape_text(x.shape());
  }
  memory->largest_global_bytes = std::max(memory->largest_global_bytes, global);
}

template <class T>
DT<T> sqrt_of(const DT<T>& x) {
  return dist::map(x, [](const T& v) { return tf::sqrt(v); });
}
template <class T>
DT<T> log_of(const DT<T>& x) {
  return dist::map(x, [](const T& v) { return tf::log(v); });
}

// One coarse-graining step of trg.cpp's rg_step on sharded tensors (d the
// bond dimension). The split matrices are ScaLAPACK's block-cyclic layout on
// a 1 x P grid with blocks of d columns: the columns of T(l, u, r, down)
// reshaped [d*d, d*d] are (r, down), so a block is one index of the last
// leg (of l for the sublattice-B split of T(u, r, down, l)). U [d*d, r]
// keeps its columns' blocks; Vh [r, d*d] its blocks of d columns, one index
// of its last leg each.
template <class T>
void rg_step(DT<T>& t, DT<T>& log_z, int step, std::int64_t d, const TrgOptions& options,
             DistTrgMemory* memory) {
  tf::linalg::Truncation keep;
  keep.max_rank = options.chi;
  const dist::Mesh& mesh = t.mesh();
  const DT<T> norm = sqrt_of(dist::sum(t * t));
  t = t / norm;
  log_z = log_z + log_of(norm) * std::ldexp(1.0, -step);

  const dist::Placements matrix = dist::block_cyclic_placements(mesh, d);
  const DT<T> ma = dist::reshape(t, {d * d, d * d}, matrix);
  const DT<T> mb = dist::reshape(dist::permute(t, {1, 2, 3, 0}), {d * d, d * d}, matrix);
  note(memory, ma, "split matrix");
  const auto a = dist::linalg::svd_truncated(ma, keep, options.svd_options);
  const auto b = dist::linalg::svd_truncated(mb, keep, options.svd_options);
  const std::int64_t r = a.rank;
  note(memory, a.U, "U");
  note(memory, a.Vh, "Vh");

  const auto root = [&](const DT<T>& s, tf::Shape shape) {
    return dist::reshape(dist::map(s, [](const T& v) { return root_of_kept(v); }), std::move(shape),
                         {dist::Replicate()});
  };
  // U's r columns are few blocks (one when r = d, all on rank 0), so each
  // factor (d^2 r values, a d-th of the network) is dealt out evenly over
  // its first leg before the contraction, which then shards its result.
  const dist::Placements legs_of_u = {dist::Shard(2, d)};   // U's column blocks
  const dist::Placements legs_of_vh = {dist::Shard(2, 1)};  // Vh's blocks of d columns
  const dist::Placements even = {dist::Shard(0)};
  const auto factor = [&](const DT<T>& m, tf::Shape shape, const dist::Placements& kept) {
    DT<T> f = dist::redistribute(dist::reshape(m, std::move(shape), kept), even);
    note(memory, f, "factor");
    return f;
  };
  const DT<T> f1 = factor(a.U * root(a.S, {1, r}), {d, d, r}, legs_of_u);    // (l, u, k)
  const DT<T> f3 = factor(root(a.S, {r, 1}) * a.Vh, {r, d, d}, legs_of_vh);  // (k, r, d)
  const DT<T> f2 = factor(b.U * root(b.S, {1, r}), {d, d, r}, legs_of_u);    // (u, r, k)
  const DT<T> f4 = factor(root(b.S, {r, 1}) * b.Vh, {r, d, d}, legs_of_vh);  // (k, d, l)
  t = dist::einsum<T>("atl,brt,mrc,lmd->abcd", {f3, f4, f1, f2});
  note(memory, t, "network");
}

}  // namespace

template <class T>
DT<T> log_z_per_site_dist(const DT<T>& beta, const TrgOptions& options, const StepCallback& on_step,
                          DistTrgMemory* memory) {
  const std::vector<std::int64_t> dims = bond_dimensions(options);  // validates the options
  if (options.checkpoint_steps != 0) {
    throw tf::Error(tf::ErrorKind::InvalidArgument, "ising_trg",
                    "ising TRG: checkpoint regions are not available in the distributed TRG "
                    "(checkpoint_steps must be 0, got " +
                        std::to_string(options.checkpoint_steps) + ")");
  }
  if (beta.rank() != 0 || beta.mesh().ndim() != 1 ||
      beta.placements()[0].kind != dist::Placement::Kind::Replicate) {
    throw tf::Error(tf::ErrorKind::InvalidArgument, "ising_trg",
                    "ising TRG: the distributed TRG takes beta as a Replicate scalar on a 1-D "
                    "mesh, got " +
                        beta.to_string());
  }
  const dist::Mesh& mesh = beta.mesh();
  // The site tensor of trg.cpp, made on every rank from its copy of beta.
  const T& b = beta.local();
  const T c = tf::sqrt(tf::cosh(b));
  const T s = tf::sqrt(tf::sinh(b));
  const T w = tf::stack({tf::stack({c, c}, 0), tf::stack({s, -s}, 0)}, 1);  // W[spin, k]
  DT<T> t(tf::Shape{2, 2, 2, 2}, mesh, {dist::Replicate()},
          tf::einsum("ai,aj,ak,al->ijkl", {w, w, w, w}));
  DT<T> log_z = beta * 0.0;
  for (int step = 0; step < options.steps; ++step) {
    rg_step(t, log_z, step, dims[static_cast<std::size_t>(step)], options, memory);
    if (on_step) on_step(step + 1, options.steps);
  }
  // Close the last tensor on itself: sum_ab T(a, b, a, b), by two identities.
  const std::int64_t d = dims.back();
  std::vector<double> eye(static_cast<std::size_t>(d * d), 0.0);
  for (std::int64_t i = 0; i < d; ++i) eye[static_cast<std::size_t>(i * (d + 1))] = 1.0;
  const DT<T> id = dist::distribute(constant_like(b, tf::Tensor::from_col_major({d, d}, eye)), mesh,
                                    {dist::Replicate()});
  const DT<T> trace = dist::einsum<T>("abcd,ac,bd->", {t, id, id});
  return log_z + log_of(trace) * std::ldexp(1.0, -options.steps);
}

template dist::DTensor log_z_per_site_dist(const dist::DTensor&, const TrgOptions&,
                                           const StepCallback&, DistTrgMemory*);
template dist::TracedDTensor log_z_per_site_dist(const dist::TracedDTensor&, const TrgOptions&,
                                                 const StepCallback&, DistTrgMemory*);

DistributedTrg::DistributedTrg(tf::EagerRuntimePtr runtime, dist::Mesh mesh, TrgOptions options,
                               bool derivatives)
    : runtime_(std::move(runtime)),
      mesh_(std::move(mesh)),
      options_(std::move(options)),
      derivatives_(derivatives) {
  bond_dimensions(options_);  // validates chi and steps
}

Thermodynamics DistributedTrg::operator()(double beta, const StepCallback& on_step) {
  memory_ = {};
  if (!derivatives_) {
    const dist::DTensor b =
        dist::distribute(runtime_->tensor(tf::Tensor::scalar(beta)), mesh_, {dist::Replicate()});
    const dist::DTensor log_z = log_z_per_site_dist(b, options_, on_step, &memory_);
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return thermodynamics(beta, dist::item(log_z), nan, nan);
  }
  // As EagerTrg: jvp(grad) of ln Z / N, forward over reverse. Each rank
  // differentiates its own part of the computation: the loss is seeded as
  // dist::backward seeds a Replicate one (rank 0 carries it), so the ranks'
  // gradients of their copy of beta are the summands of the derivative,
  // summed by an all-reduce (Partial -> Replicate) that jvp sees through.
  const bool seed_here = mesh_.coordinate(0) == 0;
  tf::EagerTensor log_z;  // the value of the innermost evaluation
  const auto f = [&](const tf::EagerTensor& b) {
    const dist::DTensor y = log_z_per_site_dist(dist::distribute(b, mesh_, {dist::Replicate()}),
                                                options_, on_step, &memory_);
    log_z = y.local().detach();
    return seed_here ? y.local() : y.local() * 0.0;
  };
  const auto df = [&](const tf::EagerTensor& b) {
    const dist::DTensor summand(tf::Shape{}, mesh_, {dist::Partial()}, tf::grad(f, b));
    return dist::redistribute(summand, {dist::Replicate()}).local();
  };
  const tf::EagerTensor b = runtime_->variable(tf::Tensor::scalar(beta));
  const tf::JvpResult r = tf::jvp(df, b, runtime_->tensor(tf::Tensor::scalar(1.0)));
  return thermodynamics(beta, log_z.item<double>(), r.output.item<double>(),
                        r.tangent ? r.tangent->item<double>() : 0.0);
}

DistributedTracedTrg::DistributedTracedTrg(tf::RuntimePtr runtime, const dist::Mesh& mesh,
                                           const TrgOptions& options, bool derivatives,
                                           const StepCallback& on_step)
    : runtime_(std::move(runtime)), derivatives_(derivatives) {
  const tf::TracedTensor b = tf::placeholder(tf::f64, {}, "beta");
  const dist::TracedDTensor beta = dist::distribute(b, mesh, {dist::Replicate()});
  const dist::TracedDTensor log_z = log_z_per_site_dist(beta, options, on_step, &memory_);
  std::vector<tf::TracedTensor> outputs{dist::full_tensor(log_z)};
  if (derivatives_) {
    // dist::grad seeds and sums as dist::backward does; its graph is
    // differentiable again, so the second derivative is its gradient.
    const dist::TracedDTensor dlog_z = dist::grad(log_z, {beta})[0];
    const dist::TracedDTensor d2log_z = dist::grad(dlog_z, {beta})[0];
    outputs.push_back(dist::full_tensor(dlog_z));
    outputs.push_back(dist::full_tensor(d2log_z));
  }
  const std::vector<tf::TracedTensor> inputs{b};
  program_ = tf::compile(outputs, inputs);
  const std::vector<tf::Tensor> example{tf::Tensor::scalar(0.5)};
  prepared_ = tf::prepare(*runtime_, program_, tf::InputSignature::of(example));
}

Thermodynamics DistributedTracedTrg::operator()(double beta) const {
  const std::vector<tf::Tensor> in{tf::Tensor::scalar(beta)};
  const std::vector<tf::Tensor> out = tf::run(*runtime_, prepared_, in);
  if (!derivatives_) {
    const double nan = std::numeric_limits<double>::quiet_NaN();
    return thermodynamics(beta, out[0].item<double>(), nan, nan);
  }
  return thermodynamics(beta, out[0].item<double>(), out[1].item<double>(), out[2].item<double>());
}

}  // namespace ising
