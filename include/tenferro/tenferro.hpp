#pragma once
// Umbrella header: the direct tier (tensors, the CPU backend, direct ops).

#include "tenferro/backend/backend.hpp"
#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/backend/structural.hpp"
#include "tenferro/core/dtype.hpp"
#include "tenferro/core/error.hpp"
#include "tenferro/core/scalar.hpp"
#include "tenferro/core/small_vector.hpp"
#include "tenferro/tensor/generator.hpp"
#include "tenferro/tensor/storage.hpp"
#include "tenferro/tensor/tensor.hpp"
#include "tenferro/tensor/typed_tensor.hpp"
