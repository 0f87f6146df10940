#include "tenferro/backend/backend.hpp"

namespace tenferro {

std::string_view name(BackendKind k) {
  switch (k) {
    case BackendKind::Cpu:
      return "cpu";
    case BackendKind::Cuda:
      return "cuda";
  }
  return "?";
}

}  // namespace tenferro
