#pragma once
// Runtime-owned caches for extension families: plans, vendor handles,
// workspaces. Bounded (entries and bytes), LRU, typed, introspectable and
// clearable by selector. Never stored in op parameters.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <typeindex>

#include "tenferro/core/error.hpp"

namespace tenferro {

struct ExtensionCacheKey {
  std::string family;
  std::string cache;
  std::string discriminator;
  friend bool operator==(const ExtensionCacheKey&, const ExtensionCacheKey&) = default;
};

struct ExtensionCacheLimits {
  std::size_t max_entries = 256;
  std::size_t max_bytes = std::size_t{256} << 20;
  friend bool operator==(const ExtensionCacheLimits&, const ExtensionCacheLimits&) = default;
};

struct CacheStats {
  std::size_t entries = 0;
  std::size_t bytes = 0;
  std::uint64_t hits = 0;
  std::uint64_t misses = 0;
  std::uint64_t evictions = 0;
  std::uint64_t clears = 0;
  CacheStats& operator+=(const CacheStats& o);
};

/// Which caches a stats query or clear applies to.
class ExtensionCacheSelector {
 public:
  static ExtensionCacheSelector all() { return {}; }
  static ExtensionCacheSelector family(std::string family_id) { return {std::move(family_id), {}}; }
  static ExtensionCacheSelector named(std::string family_id, std::string cache) {
    return {std::move(family_id), std::move(cache)};
  }
  bool matches(const std::string& family, const std::string& cache) const;

 private:
  ExtensionCacheSelector() = default;
  ExtensionCacheSelector(std::string f, std::string c)
      : family_(std::move(f)), cache_(std::move(c)) {}
  std::string family_;
  std::string cache_;
};

class ExtensionCacheStore {
 public:
  ExtensionCacheStore();
  ~ExtensionCacheStore();
  ExtensionCacheStore(const ExtensionCacheStore&) = delete;
  ExtensionCacheStore& operator=(const ExtensionCacheStore&) = delete;

  /// Limits of one named cache of a family (default limits otherwise).
  void set_limits(const std::string& family, const std::string& cache, ExtensionCacheLimits limits);
  ExtensionCacheLimits limits(const std::string& family, const std::string& cache) const;

  template <class T>
  std::shared_ptr<const T> get(const ExtensionCacheKey& key) {
    return std::static_pointer_cast<const T>(get_erased(key, typeid(T)));
  }
  /// Inserts or replaces; evicts least recently used entries of that named
  /// cache beyond its limits. A value larger than max_bytes is not kept.
  template <class T>
  void put(const ExtensionCacheKey& key, std::shared_ptr<const T> value, std::size_t bytes) {
    put_erased(key, std::move(value), typeid(T), bytes);
  }

  CacheStats stats(const ExtensionCacheSelector& selector = ExtensionCacheSelector::all()) const;
  void clear(const ExtensionCacheSelector& selector = ExtensionCacheSelector::all());

 private:
  std::shared_ptr<const void> get_erased(const ExtensionCacheKey& key, std::type_index type);
  void put_erased(const ExtensionCacheKey& key, std::shared_ptr<const void> value,
                  std::type_index type, std::size_t bytes);
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// The caches an executor sees: the runtime's store scoped to one family.
class ExtensionCaches {
 public:
  ExtensionCaches(ExtensionCacheStore& store, std::string family)
      : store_(&store), family_(std::move(family)) {}
  template <class T>
  std::shared_ptr<const T> get(const std::string& cache, const std::string& discriminator) {
    return store_->get<T>({family_, cache, discriminator});
  }
  template <class T>
  void put(const std::string& cache, const std::string& discriminator,
           std::shared_ptr<const T> value, std::size_t bytes) {
    store_->put<T>({family_, cache, discriminator}, std::move(value), bytes);
  }
  /// get(), or make() then put() on a miss. make returns std::shared_ptr<const T>.
  template <class T, class Make>
  std::shared_ptr<const T> get_or_put(const std::string& cache, const std::string& discriminator,
                                      std::size_t bytes, Make&& make) {
    if (auto hit = get<T>(cache, discriminator)) return hit;
    std::shared_ptr<const T> value = make();
    put<T>(cache, discriminator, value, bytes);
    return value;
  }
  const std::string& family() const { return family_; }

 private:
  ExtensionCacheStore* store_;
  std::string family_;
};

}  // namespace tenferro
