#include "tenferro/tensor/storage.hpp"

#include "internal/host_alloc.hpp"
#include "tenferro/core/error.hpp"

#include <cstdlib>
#include <new>

namespace tenferro {

std::string to_string(const Placement& p) {
  return p.kind == DeviceKind::Host ? std::string("host") : "cuda:" + std::to_string(p.ordinal);
}

namespace detail {

// Large blocks get no transparent-huge-page advice (NumPy gives it): on the
// project's virtual machine, blocks advised with MADV_HUGEPAGE made the
// benchmark suite slower (add of 2^22 doubles 4.0-4.4 -> 6.5 ms, a 1024^2
// GEMM 138-154 -> 239 ms in the same process), and 2 MiB alignment put GEMM
// operands on the same cache sets.
void* host_alloc(std::size_t nbytes, const char* op) {
  const std::size_t rounded = (nbytes + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
  if (p == nullptr) {
    fail(ErrorKind::OutOfMemory, op, "could not allocate ", nbytes,
         " bytes of host memory; free tensors or use smaller shapes");
  }
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
