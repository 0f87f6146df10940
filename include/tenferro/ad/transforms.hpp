#pragma once
// Transforms of traced graphs and programs: grad, vjp, jvp (and the *_many
// forms sharing one derivative graph), Hessian-vector products in both
// orders. They build graph nodes with the same AD rules as the eager tier
// (an ad::Emitter whose values are graph nodes), so transformed graphs are
// themselves transformable. A missing rule is UnsupportedAdRule naming the
// transform and the family.
//
// Rules come from an ad::AdContext. The overloads without one use
// ad::core_rules(): an immutable context holding the core primitives' rules;
// pass your own context for extension families.

#include <list>
#include <mutex>
#include <optional>

#include "tenferro/ad/grad_options.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/rules.hpp"
#include "tenferro/core/list_ref.hpp"

namespace tenferro {

namespace ad {
/// An immutable context with the core primitives' rules, built on first use.
const AdContext& core_rules();
}  // namespace ad

// ---- graph level: results are nodes of the same graph -----------------------------

/// Gradient of a real scalar (rank 0) `y` with respect to `x`. When y does
/// not depend on x: InvalidArgument, or zeros with options.allow_unused, as
/// the eager grad(f, x). A non-scalar y is ShapeMismatch and a complex (or
/// integer) y DTypeMismatch, as in the eager grad and backward() (use vjp).
TracedTensor grad(const TracedTensor& y, const TracedTensor& x,
                  const ad::AdContext& rules = ad::core_rules());
TracedTensor grad(const TracedTensor& y, const TracedTensor& x, const GradOptions& options,
                  const ad::AdContext& rules = ad::core_rules());
/// Gradients with respect to several values, one shared derivative graph;
/// nullopt where y does not depend on the value ("no dependence").
std::vector<std::optional<TracedTensor>> grad_many(const TracedTensor& y, ListRef<TracedTensor> wrt,
                                                   const ad::AdContext& rules = ad::core_rules());

/// Cotangents of `wrt` for output cotangents `cotangents` (one per output,
/// same dtype and shape); nullopt: no dependence.
std::vector<std::optional<TracedTensor>> vjp_many(ListRef<TracedTensor> outputs,
                                                  ListRef<TracedTensor> cotangents,
                                                  ListRef<TracedTensor> wrt,
                                                  const ad::AdContext& rules = ad::core_rules());
std::optional<TracedTensor> vjp(const TracedTensor& y, const TracedTensor& cotangent,
                                const TracedTensor& x,
                                const ad::AdContext& rules = ad::core_rules());

/// Tangents of `outputs` for tangents of `wrt` (one per wrt value, same dtype
/// and shape); nullopt: no dependence.
std::vector<std::optional<TracedTensor>> jvp_many(ListRef<TracedTensor> outputs,
                                                  ListRef<TracedTensor> wrt,
                                                  ListRef<TracedTensor> tangents,
                                                  const ad::AdContext& rules = ad::core_rules());
std::optional<TracedTensor> jvp(const TracedTensor& y, const TracedTensor& x,
                                const TracedTensor& tangent,
                                const ad::AdContext& rules = ad::core_rules());

enum class HvpMode : unsigned char {
  ForwardOverReverse,  // jvp of the gradient
  ReverseOverReverse,  // gradient of <gradient, v>
};
/// Hessian of a real scalar y at x applied to v (x's dtype and shape).
TracedTensor hvp(const TracedTensor& y, const TracedTensor& x, const TracedTensor& v,
                 HvpMode mode = HvpMode::ForwardOverReverse,
                 const ad::AdContext& rules = ad::core_rules());

// ---- program level: cached by structure --------------------------------------------

struct TransformCacheStats {
  std::size_t entries = 0;
  std::size_t capacity = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t clears = 0;
  std::uint64_t uncacheable = 0;  // results that would have held new tensor data
};

/// Transformed graphs keyed by (transform, fingerprint, arguments, rules).
/// Entries hold graph structure only; a hit is rebound to the calling
/// program's constants. Bounded (LRU), thread-safe.
class TransformCache {
 public:
  explicit TransformCache(std::size_t capacity = 128) : capacity_(capacity) {}
  TransformCacheStats stats() const;
  void clear();

  /// For the transforms: the cached graph for `key` over `source`, or null.
  std::shared_ptr<const detail::ProgramGraph> find(const std::string& key,
                                                   const detail::ProgramGraph& source);
  void put(const std::string& key, std::shared_ptr<const detail::ProgramGraph> source,
           std::shared_ptr<const detail::ProgramGraph> result);
  void count_uncacheable();

 private:
  struct Entry {
    std::string key;
    std::shared_ptr<const detail::ProgramGraph> source;
    std::shared_ptr<const detail::ProgramGraph> result;
  };
  mutable std::mutex mutex_;
  std::size_t capacity_;
  std::list<Entry> entries_;  // most recent first
  TransformCacheStats stats_;
};

/// Gradient program: same inputs as `p`, one output per `wrt` input (all
/// inputs when empty): the gradient of p's output 0 (a real scalar); zeros
/// where it does not depend on the input.
Program grad(const Program& p, std::span<const std::size_t> wrt = {},
             const ad::AdContext& rules = ad::core_rules(), TransformCache* cache = nullptr);
/// VJP program: inputs (p's inputs..., one cotangent per output), outputs
/// (p's outputs..., one cotangent per input; zeros for no dependence).
Program vjp(const Program& p, const ad::AdContext& rules = ad::core_rules(),
            TransformCache* cache = nullptr);
/// JVP program: inputs (p's inputs..., one tangent per input), outputs
/// (p's outputs..., one tangent per output; zeros for no dependence).
Program jvp(const Program& p, const ad::AdContext& rules = ad::core_rules(),
            TransformCache* cache = nullptr);
/// HVP program of p's output 0: inputs (p's inputs..., one direction per
/// input), outputs: H v per input.
Program hvp(const Program& p, HvpMode mode = HvpMode::ForwardOverReverse,
            const ad::AdContext& rules = ad::core_rules(), TransformCache* cache = nullptr);

}  // namespace tenferro
