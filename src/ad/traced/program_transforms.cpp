// Program-level transforms and their structure-keyed cache. A transform
// instantiates the program with constant *slots* (not tensors), so the
// derived graph refers to the source program's constants by position and
// holds no tensor data; a cache hit is rebound to the caller's constants.

#include <sstream>

#include "ad/program/graph.hpp"
#include "tenferro/ad/linearize.hpp"
#include "tenferro/ad/transforms.hpp"

namespace tenferro {

const ad::AdContext& ad::core_rules() {
  static const std::shared_ptr<AdContext> rules = AdContext::with_core_rules();
  return *rules;
}

// ---- TransformCache ----------------------------------------------------------------------

TransformCacheStats TransformCache::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  TransformCacheStats s = stats_;
  s.entries = entries_.size();
  s.capacity = capacity_;
  return s;
}

void TransformCache::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  entries_.clear();
  ++stats_.clears;
}

std::shared_ptr<const detail::ProgramGraph> TransformCache::find(
    const std::string& key, const detail::ProgramGraph& source) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = entries_.begin(); it != entries_.end(); ++it) {
    if (it->key != key || !it->source->same_structure(source)) continue;
    entries_.splice(entries_.begin(), entries_, it);
    ++stats_.hits;
    return entries_.front().result;
  }
  ++stats_.misses;
  return nullptr;
}

void TransformCache::put(const std::string& key, std::shared_ptr<const detail::ProgramGraph> source,
                         std::shared_ptr<const detail::ProgramGraph> result) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (capacity_ == 0) return;
  entries_.push_front(Entry{key, std::move(source), std::move(result)});
  while (entries_.size() > capacity_) {
    entries_.pop_back();
    ++stats_.evictions;
  }
}

void TransformCache::count_uncacheable() {
  std::lock_guard<std::mutex> lock(mutex_);
  ++stats_.uncacheable;
}

namespace {

using Builder = std::function<std::vector<TracedTensor>(std::span<const TracedTensor> inputs,
                                                        std::span<const TracedTensor> outputs,
                                                        std::vector<TracedTensor>& extra_inputs)>;

// Runs `build` on the program instantiated over placeholders and constant
// slots, compiles the result against the program's constants, and caches the
// derived structure when it holds no new tensor data.
Program transform(const Program& p, const std::string& key, const ad::AdContext& rules,
                  TransformCache* cache, const Builder& build) {
  if (!p.defined()) fail(ErrorKind::InvalidArgument, "transform", "the program is empty");
  std::ostringstream full_key;
  full_key << key << '|' << std::hex << p.fingerprint() << '|' << &rules;
  if (cache) {
    if (auto hit = cache->find(full_key.str(), *p.graph())) return Program(hit, p.constants_ptr());
  }
  std::vector<TracedTensor> ps = detail::placeholders_for(p);
  std::vector<TracedTensor> outs = detail::instantiate(*p.graph(), ps, nullptr);
  std::vector<TracedTensor> extra;
  std::vector<TracedTensor> results = build(ps, outs, extra);
  std::vector<TracedTensor> inputs = ps;
  inputs.insert(inputs.end(), extra.begin(), extra.end());
  Program derived = detail::compile_graph(results, inputs, p.constants_ptr(), {});
  if (cache) {
    if (derived.constants_ptr() == p.constants_ptr()) {
      cache->put(full_key.str(), p.graph(), derived.graph());
    } else {
      cache->count_uncacheable();
    }
  }
  return derived;
}

TracedTensor or_zeros(const std::optional<TracedTensor>& t, const TracedTensor& like) {
  return t ? *t : zeros_like(like);
}

std::vector<std::size_t> all_or(std::span<const std::size_t> wrt, std::size_t n) {
  std::vector<std::size_t> out(wrt.begin(), wrt.end());
  if (out.empty())
    for (std::size_t i = 0; i < n; ++i) out.push_back(i);
  for (std::size_t i : out) {
    if (i >= n)
      fail(ErrorKind::InvalidArgument, "grad", "wrt index ", i, " but the program has ", n,
           " inputs");
  }
  return out;
}

void require_outputs(const Program& p, const char* what) {
  if (p.defined() && p.output_count() == 0) {
    fail(ErrorKind::InvalidArgument, what, "the program has no outputs to differentiate");
  }
}

}  // namespace

Program grad(const Program& p, std::span<const std::size_t> wrt, const ad::AdContext& rules,
             TransformCache* cache) {
  require_outputs(p, "grad");
  const std::vector<std::size_t> idx = all_or(wrt, p.defined() ? p.input_count() : 0);
  std::ostringstream key;
  key << "grad";
  for (std::size_t i : idx) key << ',' << i;
  return transform(p, key.str(), rules, cache,
                   [&](std::span<const TracedTensor> in, std::span<const TracedTensor> out,
                       std::vector<TracedTensor>&) {
                     std::vector<TracedTensor> xs;
                     for (std::size_t i : idx) xs.push_back(in[i]);
                     auto g = grad_many(out[0], xs, rules);
                     std::vector<TracedTensor> r;
                     for (std::size_t k = 0; k < xs.size(); ++k) r.push_back(or_zeros(g[k], xs[k]));
                     return r;
                   });
}

Program vjp(const Program& p, const ad::AdContext& rules, TransformCache* cache) {
  require_outputs(p, "vjp");
  return transform(p, "vjp", rules, cache,
                   [&](std::span<const TracedTensor> in, std::span<const TracedTensor> out,
                       std::vector<TracedTensor>& extra) {
                     for (const auto& o : out) extra.push_back(placeholder(o.dtype(), o.shape()));
                     auto cts = vjp_many(out, extra, in, rules);
                     std::vector<TracedTensor> r(out.begin(), out.end());
                     for (std::size_t i = 0; i < in.size(); ++i)
                       r.push_back(or_zeros(cts[i], in[i]));
                     return r;
                   });
}

Program jvp(const Program& p, const ad::AdContext& rules, TransformCache* cache) {
  require_outputs(p, "jvp");
  return transform(p, "jvp", rules, cache,
                   [&](std::span<const TracedTensor> in, std::span<const TracedTensor> out,
                       std::vector<TracedTensor>& extra) {
                     for (const auto& x : in) extra.push_back(placeholder(x.dtype(), x.shape()));
                     auto ts = jvp_many(out, in, extra, rules);
                     std::vector<TracedTensor> r(out.begin(), out.end());
                     for (std::size_t j = 0; j < out.size(); ++j)
                       r.push_back(or_zeros(ts[j], out[j]));
                     return r;
                   });
}

Program hvp(const Program& p, HvpMode mode, const ad::AdContext& rules, TransformCache* cache) {
  require_outputs(p, "hvp");
  const char* key = mode == HvpMode::ForwardOverReverse ? "hvp-fwd" : "hvp-rev";
  return transform(p, key, rules, cache,
                   [&](std::span<const TracedTensor> in, std::span<const TracedTensor> out,
                       std::vector<TracedTensor>& extra) {
                     for (const auto& x : in) extra.push_back(placeholder(x.dtype(), x.shape()));
                     std::vector<TracedTensor> xs, vs;
                     for (std::size_t i = 0; i < in.size(); ++i) {
                       if (!ad::differentiable(in[i].dtype())) continue;
                       xs.push_back(in[i]);
                       vs.push_back(extra[i]);
                     }
                     // One gradient graph shared by every direction.
                     auto g = grad_many(out[0], xs, rules);
                     std::vector<TracedTensor> gs;
                     for (std::size_t k = 0; k < xs.size(); ++k)
                       gs.push_back(or_zeros(g[k], xs[k]));
                     std::vector<TracedTensor> hv;
                     if (mode == HvpMode::ForwardOverReverse) {
                       auto t = jvp_many(gs, xs, vs, rules);
                       for (std::size_t k = 0; k < xs.size(); ++k)
                         hv.push_back(or_zeros(t[k], xs[k]));
                     } else {
                       TracedTensor inner;
                       for (std::size_t k = 0; k < xs.size(); ++k) {
                         TracedTensor term = is_complex(gs[k].dtype())
                                                 ? sum(real(conj(gs[k]) * vs[k]))
                                                 : sum(gs[k] * vs[k]);
                         if (term.dtype() != out[0].dtype()) term = cast(term, out[0].dtype());
                         inner = inner.defined() ? inner + term : term;
                       }
                       if (inner.defined()) {
                         auto h = grad_many(inner, xs, rules);
                         for (std::size_t k = 0; k < xs.size(); ++k)
                           hv.push_back(or_zeros(h[k], xs[k]));
                       }
                     }
                     std::vector<TracedTensor> r;
                     std::size_t k = 0;
                     for (std::size_t i = 0; i < in.size(); ++i) {
                       r.push_back(ad::differentiable(in[i].dtype()) ? hv[k++] : zeros_like(in[i]));
                     }
                     return r;
                   });
}

}  // namespace tenferro
