#pragma once
// Prepared-plan cache keyed by (op identity, signature, epoch): bounded, LRU,
// single-flight (concurrent preparations of one key prepare once), with
// failures cached for the epoch they happened in.

#include <functional>
#include <future>
#include <list>
#include <mutex>
#include <unordered_map>

#include "tenferro/runtime/runtime.hpp"

namespace tenferro::detail {

struct PlanResult {
  std::shared_ptr<const PreparedPlan> plan;  // null when Unsupported
  std::string unsupported_reason;
};

struct PlanKey {
  OpPtr op;
  InputSignature signature;
  std::uint64_t epoch = 0;
  std::size_t hash = 0;
  bool operator==(const PlanKey& o) const {
    return hash == o.hash && epoch == o.epoch && signature == o.signature &&
           (op == o.op || op->equals(*o.op));
  }
};

struct PlanKeyHash {
  std::size_t operator()(const PlanKey& k) const { return k.hash; }
};

class PlanCacheImpl {
 public:
  explicit PlanCacheImpl(std::size_t capacity) { stats_.capacity = capacity; }

  PlanResult get_or_prepare(PlanKey key, const std::function<PlanResult()>& prepare);
  /// Drops entries of other epochs.
  void retain_epoch(std::uint64_t epoch);
  void clear();
  void count_prepare() {
    std::lock_guard<std::mutex> lock(mutex_);
    ++stats_.prepares;
  }
  PlanCacheStats stats() const;

 private:
  struct Entry {
    std::shared_future<PlanResult> result;
    std::list<PlanKey>::iterator position;
  };
  mutable std::mutex mutex_;
  std::list<PlanKey> lru_;  // front = most recently used
  std::unordered_map<PlanKey, Entry, PlanKeyHash> map_;
  PlanCacheStats stats_;
};

}  // namespace tenferro::detail

namespace tenferro {

/// The runtime's plan cache (Runtime holds it by an incomplete type).
struct Runtime::PlanCache : detail::PlanCacheImpl {
  using detail::PlanCacheImpl::PlanCacheImpl;
};

}  // namespace tenferro
