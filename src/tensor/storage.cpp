#include "tenferro/tensor/storage.hpp"

#include "tenferro/core/error.hpp"
#include "tensor/host_alloc.hpp"

#include <cstdint>
#include <cstdlib>
#include <new>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

namespace tenferro {

std::string to_string(const Placement& p) {
  if (p.is_host()) return "host";
  return std::string(p.device) + ":" + std::to_string(p.ordinal);
}

namespace detail {

// Blocks of 4 MiB and more are advised to use transparent huge pages (as
// NumPy does, from the same size), where the system leaves that to the
// program (`madvise` mode): a stream over 2^22-double operands spends much of
// its time in page walks with 4 KiB pages, the more so in a virtual machine
// (add of 2^22 doubles on a 2-core AMD EPYC VM: 4.1 ms best with 4 KiB pages,
// 2.8-2.9 ms with huge pages). The start is not moved to a 2 MiB boundary:
// the kernel backs the 2 MiB-aligned interior, and blocks do not all begin on
// the same cache sets (2 MiB-aligned GEMM operands were slower on an Intel VM).
constexpr std::size_t kHugePageAdviceFrom = std::size_t{1} << 22;

// Blocks of 64 KiB and more start on a 4 KiB page boundary, so that arrays
// of that size share their address modulo 4 KiB. A loop that stores to one
// array while loading from another whose address, modulo 4 KiB, lies a
// little below the store's makes each such load wait for the store (4K
// aliasing), and blocks taken one after another from the heap land at such
// distances: an add of 2^20 doubles at 2T took 185-189 us with its output
// 64-256 bytes above an input modulo 4 KiB, 154-161 us at other distances
// and at 0. Higher address bits still differ from block to block (the
// cache-set note above).
constexpr std::size_t kAliasAlignFrom = std::size_t{1} << 16;
constexpr std::size_t kAliasSpan = 4096;  // 4K aliasing compares the low 12 address bits

void* host_alloc(std::size_t nbytes, const char* op) {
  const std::size_t align = nbytes >= kAliasAlignFrom ? kAliasSpan : 64;
  const std::size_t rounded = (nbytes + align - 1) / align * align;
  void* p = std::aligned_alloc(align, rounded == 0 ? align : rounded);
  if (p == nullptr) {
    fail(ErrorKind::OutOfMemory, op, "could not allocate ", nbytes,
         " bytes of host memory; free tensors or use smaller shapes");
  }
#if defined(__linux__) && defined(MADV_HUGEPAGE)
  if (rounded >= kHugePageAdviceFrom) {
    // Advice only: its failure (no THP support) leaves ordinary pages.
    static const auto page = static_cast<std::uintptr_t>(sysconf(_SC_PAGESIZE));
    const auto begin = (reinterpret_cast<std::uintptr_t>(p) + page - 1) / page * page;
    const auto end = (reinterpret_cast<std::uintptr_t>(p) + rounded) / page * page;
    if (end > begin) madvise(reinterpret_cast<void*>(begin), end - begin, MADV_HUGEPAGE);
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
