#include "tensor/object_pool.hpp"

#include <new>

namespace tenferro::detail {

namespace {

#if defined(__SANITIZE_ADDRESS__)
constexpr bool kPassThrough = true;
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
constexpr bool kPassThrough = true;
#else
constexpr bool kPassThrough = false;
#endif
#else
constexpr bool kPassThrough = false;
#endif

constexpr std::size_t kGranule = 64;
constexpr std::size_t kClasses = kPooledMaxBytes / kGranule;
// Each list keeps at most this many bytes of blocks (a graph of a few
// thousand recorded ops); the rest go back to operator delete. A thread
// holds at most that per size class it has used.
constexpr std::size_t kListBytes = std::size_t{1} << 20;

std::size_t class_of(std::size_t bytes) {
  return (bytes + kGranule - 1) / kGranule - 1;
}
std::size_t class_bytes(std::size_t cls) {
  return (cls + 1) * kGranule;
}

struct FreeBlock {
  FreeBlock* next;
};

struct Lists {
  FreeBlock* head[kClasses] = {};
  std::size_t count[kClasses] = {};
  ~Lists();
};

// Set once this thread's lists are destroyed: blocks freed later in the
// thread's exit (or by static destructors after main) bypass the pool.
thread_local bool t_lists_gone = false;

Lists& lists() {
  thread_local Lists l;
  return l;
}

Lists::~Lists() {
  for (std::size_t c = 0; c < kClasses; ++c) {
    while (head[c] != nullptr) {
      FreeBlock* b = head[c];
      head[c] = b->next;
      ::operator delete(static_cast<void*>(b));
    }
  }
  t_lists_gone = true;
}

}  // namespace

void* pool_allocate(std::size_t bytes) {
  if (kPassThrough || bytes == 0 || bytes > kPooledMaxBytes || t_lists_gone)
    return ::operator new(bytes);
  const std::size_t c = class_of(bytes);
  Lists& l = lists();
  if (FreeBlock* b = l.head[c]) {
    l.head[c] = b->next;
    --l.count[c];
    return b;
  }
  return ::operator new(class_bytes(c));
}

void pool_deallocate(void* block, std::size_t bytes) noexcept {
  if (block == nullptr) return;
  if (kPassThrough || bytes == 0 || bytes > kPooledMaxBytes || t_lists_gone) {
    ::operator delete(block);
    return;
  }
  const std::size_t c = class_of(bytes);
  Lists& l = lists();
  if (l.count[c] * class_bytes(c) >= kListBytes) {
    ::operator delete(block);
    return;
  }
  l.head[c] = ::new (block) FreeBlock{l.head[c]};
  ++l.count[c];
}

}  // namespace tenferro::detail
