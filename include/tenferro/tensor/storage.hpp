#pragma once
// Buffers behind tensors. Placement is metadata: nothing here assumes host
// memory except the host accessors, which check it.

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

namespace tenferro {

/// Where a buffer lives: a device ("host", or the name a backend gives its
/// memory, e.g. "cuda") and an ordinal among the devices of that name. The
/// set of devices is open: a backend names its own.
struct Placement {
  std::string_view device = "host";  // a string with static storage duration
  int ordinal = 0;
  bool is_host() const { return device == "host"; }
  friend bool operator==(const Placement&, const Placement&) = default;
};

std::string to_string(const Placement& p);

/// A block of memory owned by someone: the heap, a backend's buffer pool, or an
/// external owner kept alive by the storage. For backend authors.
class Storage {
 public:
  Storage(void* data, std::size_t nbytes, Placement placement)
      : data_(data), nbytes_(nbytes), placement_(placement) {}
  Storage(const Storage&) = delete;
  Storage& operator=(const Storage&) = delete;
  virtual ~Storage() = default;

  void* data() const { return data_; }
  std::size_t nbytes() const { return nbytes_; }
  Placement placement() const { return placement_; }

 private:
  void* data_;
  std::size_t nbytes_;
  Placement placement_;
};

/// Host memory from the heap, 64-byte aligned, freed with the storage.
std::shared_ptr<Storage> allocate_host_storage(std::size_t nbytes);

/// Wraps memory owned elsewhere; `keepalive` (may be null) is held as long as
/// the storage lives, so the owner can tie the memory's lifetime to it.
std::shared_ptr<Storage> wrap_storage(void* data, std::size_t nbytes, Placement placement,
                                      std::shared_ptr<void> keepalive);

}  // namespace tenferro
