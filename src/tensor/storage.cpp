#include "tenferro/tensor/storage.hpp"

#include "internal/host_alloc.hpp"
#include "tenferro/core/error.hpp"

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

// Blocks of at least kHugeFrom bytes are aligned to and padded to whole
// 2 MiB pages and marked for transparent huge pages (as NumPy does for its
// large arrays): touching a fresh 32 MiB block then takes 16 page faults
// instead of 8192, and streaming kernels miss the TLB 512 times less often
// (most costly under a hypervisor's nested page tables). Where the kernel's
// THP mode is `never` the advice is a no-op.
constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kHugeFrom = std::size_t{4} << 20;

void* host_alloc(std::size_t nbytes, const char* op) {
  std::size_t align = 64;
  std::size_t rounded = (nbytes + 63) / 64 * 64;
  if (rounded >= kHugeFrom) {
    align = kHugePage;
    rounded = (rounded + kHugePage - 1) / kHugePage * kHugePage;
  }
  void* p = std::aligned_alloc(align, rounded == 0 ? 64 : rounded);
  if (p == nullptr) {
    fail(ErrorKind::OutOfMemory, op, "could not allocate ", nbytes,
         " bytes of host memory; free tensors or use smaller shapes");
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (align == kHugePage) (void)madvise(p, rounded, MADV_HUGEPAGE);
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
