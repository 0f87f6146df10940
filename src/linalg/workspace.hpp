#pragma once
// LAPACK workspaces owned by the runtime, not by threads: each op family
// keeps one pool per workspace type in its extension cache ("workspaces"),
// a kernel takes the pool before its batch loop and leases a workspace per
// matrix. A workspace remembers the sizes it queried for its last shape, so
// a batch (and the calls after it) query LAPACK once per shape and
// workspace, not per matrix; buffers above kKeepBytes are released after
// each use. Clearing the runtime's caches (Runtime::clear_caches) frees
// the pools; nothing outlives the runtime in the backend's threads.
// Private to src/linalg/.

#include <cstddef>
#include <memory>
#include <mutex>
#include <typeinfo>
#include <vector>

#include "tenferro/runtime/extension_cache.hpp"

namespace tenferro::linalg::detail {

/// The name of the extension cache holding the pools.
inline constexpr const char* kWorkspaceCache = "workspaces";
/// Buffers above this are released after each use.
inline constexpr std::size_t kKeepBytes = std::size_t{4} << 20;

/// Workspaces of type W (default-constructible, with trim()), handed out one
/// per lease; a returned workspace is kept for the next lease.
template <class W>
class WorkspacePool {
 public:
  class Lease {
   public:
    Lease(const WorkspacePool& pool, std::unique_ptr<W> w) : pool_(&pool), w_(std::move(w)) {}
    Lease(Lease&&) noexcept = default;
    Lease& operator=(Lease&&) = delete;
    ~Lease() {
      if (w_) pool_->give_back(std::move(w_));
    }
    W& operator*() const { return *w_; }
    W* operator->() const { return w_.get(); }

   private:
    const WorkspacePool* pool_;
    std::unique_ptr<W> w_;
  };

  Lease lease() const {
    std::unique_ptr<W> w;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (!free_.empty()) {
        w = std::move(free_.back());
        free_.pop_back();
      }
    }
    return Lease(*this, w ? std::move(w) : std::make_unique<W>());
  }

 private:
  void give_back(std::unique_ptr<W> w) const {
    w->trim();
    std::lock_guard<std::mutex> lock(mutex_);
    free_.push_back(std::move(w));
  }
  // The cache hands out const values; the pool's free list is its state.
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<W>> free_;
};

/// What a kernel gets from its call: the family's cache, where its pools live.
class Workspaces {
 public:
  explicit Workspaces(ExtensionCaches& caches) : caches_(&caches) {}
  /// The pool of W workspaces (made on first use). Take it before a batch
  /// loop and lease inside it.
  template <class W>
  std::shared_ptr<const WorkspacePool<W>> pool() const {
    return caches_->get_or_put<WorkspacePool<W>>(
        kWorkspaceCache, typeid(W).name(), sizeof(WorkspacePool<W>),
        [] { return std::make_shared<const WorkspacePool<W>>(); });
  }

 private:
  ExtensionCaches* caches_;
};

}  // namespace tenferro::linalg::detail
