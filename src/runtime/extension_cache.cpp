#include "tenferro/runtime/extension_cache.hpp"

#include <list>
#include <map>
#include <unordered_map>

namespace tenferro {

CacheStats& CacheStats::operator+=(const CacheStats& o) {
  entries += o.entries;
  bytes += o.bytes;
  hits += o.hits;
  misses += o.misses;
  evictions += o.evictions;
  clears += o.clears;
  return *this;
}

bool ExtensionCacheSelector::matches(const std::string& family, const std::string& cache) const {
  if (!family_.empty() && family_ != family) return false;
  if (!cache_.empty() && cache_ != cache) return false;
  return true;
}

namespace {
struct Entry {
  std::string discriminator;
  std::shared_ptr<const void> value;
  std::type_index type{typeid(void)};
  std::size_t bytes = 0;
};
// One named cache of one family: LRU list (front = most recent) and index.
struct NamedCache {
  ExtensionCacheLimits limits;
  std::list<Entry> lru;
  std::unordered_map<std::string, std::list<Entry>::iterator> index;
  CacheStats stats;

  void evict_to_limits() {
    while (!lru.empty() && (lru.size() > limits.max_entries || stats.bytes > limits.max_bytes)) {
      Entry& victim = lru.back();
      stats.bytes -= victim.bytes;
      index.erase(victim.discriminator);
      lru.pop_back();
      ++stats.evictions;
    }
    stats.entries = lru.size();
  }
};
}  // namespace

struct ExtensionCacheStore::Impl {
  mutable std::mutex mutex;
  std::map<std::pair<std::string, std::string>, NamedCache> caches;
  NamedCache& named(const std::string& family, const std::string& cache) {
    return caches[{family, cache}];
  }
};

ExtensionCacheStore::ExtensionCacheStore() : impl_(std::make_unique<Impl>()) {}
ExtensionCacheStore::~ExtensionCacheStore() = default;

void ExtensionCacheStore::set_limits(const std::string& family, const std::string& cache,
                                     ExtensionCacheLimits limits) {
  if (limits.max_entries == 0) {
    fail(ErrorKind::InvalidArgument, "extension_cache", "cache '", cache, "' of ", family,
         " needs max_entries >= 1");
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  NamedCache& c = impl_->named(family, cache);
  c.limits = limits;
  c.evict_to_limits();
}

ExtensionCacheLimits ExtensionCacheStore::limits(const std::string& family,
                                                 const std::string& cache) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  auto it = impl_->caches.find({family, cache});
  return it == impl_->caches.end() ? ExtensionCacheLimits{} : it->second.limits;
}

std::shared_ptr<const void> ExtensionCacheStore::get_erased(const ExtensionCacheKey& key,
                                                            std::type_index type) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  NamedCache& c = impl_->named(key.family, key.cache);
  auto it = c.index.find(key.discriminator);
  if (it == c.index.end()) {
    ++c.stats.misses;
    return nullptr;
  }
  if (it->second->type != type) {
    fail(ErrorKind::InvalidArgument, key.family, "cache '", key.cache, "' entry '",
         key.discriminator, "' holds another type than requested; use one type per cache name");
  }
  c.lru.splice(c.lru.begin(), c.lru, it->second);
  ++c.stats.hits;
  return it->second->value;
}

void ExtensionCacheStore::put_erased(const ExtensionCacheKey& key,
                                     std::shared_ptr<const void> value, std::type_index type,
                                     std::size_t bytes) {
  if (!value) fail(ErrorKind::InvalidArgument, key.family, "cannot cache a null value");
  std::lock_guard<std::mutex> lock(impl_->mutex);
  NamedCache& c = impl_->named(key.family, key.cache);
  auto it = c.index.find(key.discriminator);
  if (it != c.index.end()) {
    c.stats.bytes -= it->second->bytes;
    c.lru.erase(it->second);
    c.index.erase(it);
  }
  if (bytes > c.limits.max_bytes) {
    ++c.stats.evictions;  // too large to keep at all
    c.stats.entries = c.lru.size();
    return;
  }
  c.lru.push_front(Entry{key.discriminator, std::move(value), type, bytes});
  c.index[key.discriminator] = c.lru.begin();
  c.stats.bytes += bytes;
  c.evict_to_limits();
}

CacheStats ExtensionCacheStore::stats(const ExtensionCacheSelector& selector) const {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  CacheStats total;
  for (const auto& [key, c] : impl_->caches) {
    if (selector.matches(key.first, key.second)) total += c.stats;
  }
  return total;
}

void ExtensionCacheStore::clear(const ExtensionCacheSelector& selector) {
  std::lock_guard<std::mutex> lock(impl_->mutex);
  for (auto& [key, c] : impl_->caches) {
    if (!selector.matches(key.first, key.second)) continue;
    c.lru.clear();
    c.index.clear();
    c.stats.bytes = 0;
    c.stats.entries = 0;
    ++c.stats.clears;
  }
}

}  // namespace tenferro
