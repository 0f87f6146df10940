#pragma once
// The backend interface. A backend owns memory, threads and vendor libraries
// for one placement. Direct operations take a Backend& and dispatch on kind();
// user code never names the concrete kernels, so a CUDA backend slots in
// beside the CPU one without changing calls.

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>

#include "tenferro/tensor/tensor.hpp"

namespace tenferro {

enum class BackendKind : unsigned char { Cpu, Cuda };

std::string_view name(BackendKind k);

class Backend {
 public:
  Backend();
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend();

  virtual BackendKind kind() const = 0;
  /// Where tensors allocated by this backend live.
  virtual Placement placement() const = 0;
  /// Uninitialised compact column-major tensor in this backend's memory.
  virtual Tensor empty(std::span<const std::int64_t> shape, DType dtype) = 0;
  /// Whether this backend can read tensors placed at `p` without a transfer.
  virtual bool accepts(Placement p) const { return p == placement(); }
  Tensor empty(std::initializer_list<std::int64_t> shape, DType dtype) {
    return empty(std::span<const std::int64_t>(shape.begin(), shape.size()), dtype);
  }

  /// State that code built on this backend keeps for as long as the backend
  /// lives: the object stored under `key`, made by `make()` on first use
  /// (made outside any lock; if two threads race, one object wins and both
  /// get it). The direct tier of the families keeps its runtime here, so
  /// plans persist across calls (EagerRuntime::attached). Thread-safe.
  /// Attachments are released before the backend's own resources.
  std::shared_ptr<void> attachment(std::string_view key,
                                   const std::function<std::shared_ptr<void>()>& make);

 protected:
  /// Releases every attachment; a derived backend calls it first in its
  /// destructor, while its memory and threads still exist.
  void release_attachments();

 private:
  struct Attachments;
  std::unique_ptr<Attachments> attachments_;
};

}  // namespace tenferro
