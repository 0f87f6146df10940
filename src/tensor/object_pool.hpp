#pragma once
// Thread-local free lists for the small objects every eager op makes and a
// backward pass frees in bulk: tensor handles, graph nodes, storage control
// blocks, op descriptors (each a shared_ptr's control block with its object,
// 64 to 1024 bytes). glibc keeps seven blocks of a size per thread; a graph
// frees dozens at once, and the rest took its slow path (a quarter of the
// instructions of a small grad). Not installed.
//
// A block freed on another thread joins that thread's list (every block of
// a size class has the same size). Under AddressSanitizer the pool passes
// through to operator new/delete, so use-after-free stays detectable.

#include <cstddef>
#include <memory>
#include <type_traits>
#include <utility>
#include <vector>

namespace tenferro::detail {

/// Largest request served from the free lists; larger ones go to operator new.
inline constexpr std::size_t kPooledMaxBytes = 1024;

/// A block of at least `bytes` bytes, aligned for any fundamental type
/// (std::bad_alloc when memory is exhausted, as operator new).
void* pool_allocate(std::size_t bytes);
/// Returns a block from pool_allocate(bytes) (the same `bytes`).
void pool_deallocate(void* block, std::size_t bytes) noexcept;

/// A stateless allocator over pool_allocate, for std::allocate_shared.
template <class T>
struct PoolAllocator {
  using value_type = T;
  PoolAllocator() = default;
  template <class U>
  PoolAllocator(const PoolAllocator<U>&) noexcept {}  // NOLINT: rebinding
  T* allocate(std::size_t n) {
    static_assert(alignof(T) <= alignof(std::max_align_t), "over-aligned types are not pooled");
    return static_cast<T*>(pool_allocate(n * sizeof(T)));
  }
  void deallocate(T* p, std::size_t n) noexcept { pool_deallocate(p, n * sizeof(T)); }
  template <class U>
  bool operator==(const PoolAllocator<U>&) const noexcept {
    return true;
  }
};

/// A vector whose buffer comes from the pool (while it is at most
/// kPooledMaxBytes): for the short lists of graph nodes and traversals.
template <class T>
using PooledVector = std::vector<T, PoolAllocator<T>>;

/// std::make_shared with the object and its control block from the pool.
template <class T, class... Args>
std::shared_ptr<T> make_pooled(Args&&... args) {
  return std::allocate_shared<T>(PoolAllocator<std::remove_const_t<T>>{},
                                 std::forward<Args>(args)...);
}

}  // namespace tenferro::detail
