#pragma once
// The backend interface. A backend owns memory, threads and vendor libraries
// for one placement. Direct operations take a Backend& and dispatch on kind();
// user code never names the concrete kernels, so a CUDA backend slots in
// beside the CPU one without changing calls.

#include <cstdint>
#include <span>
#include <string_view>

#include "tenferro/tensor/tensor.hpp"

namespace tenferro {

enum class BackendKind : unsigned char { Cpu, Cuda };

std::string_view name(BackendKind k);

class Backend {
 public:
  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  virtual ~Backend() = default;

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
};

}  // namespace tenferro
