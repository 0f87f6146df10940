#include "tenferro/tensor/storage.hpp"

#include "internal/host_alloc.hpp"
#include "tenferro/core/error.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#endif

namespace tenferro {

std::string to_string(const Placement& p) {
  return p.kind == DeviceKind::Host ? std::string("host") : "cuda:" + std::to_string(p.ordinal);
}

namespace detail {

// Blocks of at least kHugeFrom bytes are advised for transparent huge pages
// (as NumPy does for its large arrays): touching a fresh 32 MiB block then
// takes a few dozen page faults instead of 8192, and streaming kernels miss
// the TLB far less often (most costly under a hypervisor's nested page
// tables); the kernel maps huge pages on the 2 MiB-aligned stretches inside
// the block. The blocks are not aligned to 2 MiB themselves: operands that
// all start at the same offset of a huge page contend for the same cache
// sets (a 1024^2 GEMM ran 15-25% slower with A, B and C so aligned). Where
// the kernel's THP mode is `never` the advice is a no-op.
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;
constexpr std::uintptr_t kPage = 4096;

void* host_alloc(std::size_t nbytes, const char* op) {
  const std::size_t rounded = (nbytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) {
    fail(ErrorKind::OutOfMemory, op, "could not allocate ", nbytes,
         " bytes of host memory; free tensors or use smaller shapes");
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (rounded >= kHugeFrom) {
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + kPage - 1) / kPage * kPage;
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + rounded) / kPage * kPage;
    (void)madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
  }
#endif
  return p;
}

}  // namespace detail

namespace {
class HostStorage final : public Storage {
 public:
  explicit HostStorage(std::size_t nbytes) : Storage(allocate(nbytes), nbytes, Placement{}) {}
  ~HostStorage() override { std::free(data()); }

 private:
  static void* allocate(std::size_t nbytes) { return detail::host_alloc(nbytes, "allocate"); }
};

class ExternalStorage final : public Storage {
 public:
  ExternalStorage(void* data, std::size_t nbytes, Placement placement,
                  std::shared_ptr<void> keepalive)
      : Storage(data, nbytes, placement), keepalive_(std::move(keepalive)) {}

 private:
  std::shared_ptr<void> keepalive_;
};
}  // namespace

std::shared_ptr<Storage> allocate_host_storage(std::size_t nbytes) {
  return std::make_shared<HostStorage>(nbytes);
}

std::shared_ptr<Storage> wrap_storage(void* data, std::size_t nbytes, Placement placement,
                                      std::shared_ptr<void> keepalive) {
  return std::make_shared<ExternalStorage>(data, nbytes, placement, std::move(keepalive));
}

}  // namespace tenferro
