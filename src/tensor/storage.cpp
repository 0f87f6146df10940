#include "tenferro/tensor/storage.hpp"

#include "tenferro/core/error.hpp"

#include <cstdlib>
#include <new>

namespace tenferro {

std::string to_string(const Placement& p) {
  return p.kind == DeviceKind::Host ? std::string("host") : "cuda:" + std::to_string(p.ordinal);
}

namespace {
class HostStorage final : public Storage {
 public:
  explicit HostStorage(std::size_t nbytes) : Storage(allocate(nbytes), nbytes, Placement{}) {}
  ~HostStorage() override { std::free(data()); }

 private:
  static void* allocate(std::size_t nbytes) {
    const std::size_t rounded = (nbytes + 63) / 64 * 64;
    void* p = std::aligned_alloc(64, rounded == 0 ? 64 : rounded);
    if (p == nullptr) {
      fail(ErrorKind::OutOfMemory, "allocate", "could not allocate ", nbytes,
           " bytes of host memory; free tensors or use smaller shapes");
    }
    return p;
  }
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
