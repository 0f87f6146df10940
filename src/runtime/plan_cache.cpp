#include "runtime/plan_cache.hpp"

namespace tenferro::detail {

PlanResult PlanCacheImpl::get_or_prepare(PlanKey key, const std::function<PlanResult()>& prepare) {
  std::unique_lock<std::mutex> lock(mutex_);
  auto it = map_.find(key);
  if (it != map_.end()) {
    ++stats_.hits;
    lru_.splice(lru_.begin(), lru_, it->second.position);
    std::shared_future<PlanResult> result = it->second.result;
    if (result.wait_for(std::chrono::seconds(0)) != std::future_status::ready)
      ++stats_.shared_waits;
    lock.unlock();
    return result.get();  // rethrows a cached failure
  }
  ++stats_.misses;
  std::promise<PlanResult> promise;
  std::shared_future<PlanResult> result = promise.get_future().share();
  lru_.push_front(key);
  map_.emplace(std::move(key), Entry{result, lru_.begin()});
  while (map_.size() > stats_.capacity) {
    map_.erase(lru_.back());
    lru_.pop_back();
    ++stats_.evictions;
  }
  stats_.entries = map_.size();
  lock.unlock();
  // The caller that inserted the entry prepares, outside the lock; others wait
  // on the shared future.
  try {
    promise.set_value(prepare());
  } catch (...) {
    {
      std::lock_guard<std::mutex> relock(mutex_);
      ++stats_.failures;
    }
    promise.set_exception(std::current_exception());
  }
  return result.get();
}

void PlanCacheImpl::retain_epoch(std::uint64_t epoch) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto it = lru_.begin(); it != lru_.end();) {
    if (it->epoch != epoch) {
      map_.erase(*it);
      it = lru_.erase(it);
    } else {
      ++it;
    }
  }
  stats_.entries = map_.size();
}

void PlanCacheImpl::clear() {
  std::lock_guard<std::mutex> lock(mutex_);
  map_.clear();
  lru_.clear();
  stats_.entries = 0;
}

PlanCacheStats PlanCacheImpl::stats() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return stats_;
}

}  // namespace tenferro::detail
