#pragma once
// Umbrella header: every public tier (direct, runtime/extension, eager AD).

#include "tenferro/backend/backend.hpp"
#include "tenferro/backend/contract.hpp"
#include "tenferro/backend/cpu/cpu_backend.hpp"
#include "tenferro/backend/elementwise.hpp"
#include "tenferro/backend/reduce.hpp"
#include "tenferro/backend/scan.hpp"
#include "tenferro/core/dtype.hpp"
#include "tenferro/core/error.hpp"
#include "tenferro/core/scalar.hpp"
#include "tenferro/core/small_vector.hpp"
#include "tenferro/tensor/generator.hpp"
#include "tenferro/tensor/storage.hpp"
#include "tenferro/tensor/tensor.hpp"
#include "tenferro/tensor/typed_tensor.hpp"
// The operation vocabulary, the one operation surface of every tier (direct
// forms included), runtime and extension API.
#include "tenferro/ad/ops.hpp"
#include "tenferro/ops/extension_op.hpp"
#include "tenferro/ops/primitives.hpp"
#include "tenferro/runtime/runtime.hpp"
#include "tenferro/runtime/simple_family.hpp"
// Autodiff: rules, the eager tier, extension ops in eager mode, gradient checking.
#include "tenferro/ad/composite.hpp"
#include "tenferro/ad/eager.hpp"
#include "tenferro/ad/eager_extension.hpp"
#include "tenferro/ad/eager_ops.hpp"
#include "tenferro/ad/grad_check.hpp"
#include "tenferro/ad/rules.hpp"
// Traced tier: graphs, programs, transforms, control flow and fixed points.
#include "tenferro/ad/control_flow.hpp"
#include "tenferro/ad/program.hpp"
#include "tenferro/ad/traced.hpp"
#include "tenferro/ad/transforms.hpp"
// .npy/.npz files are not here: include "tenferro/io/npy.hpp" (its
// <filesystem> was 6% of a user translation unit's compile time).
// Families (extension libraries that install themselves on first use).
#include "tenferro/einsum/einsum.hpp"
#include "tenferro/fft/fft.hpp"
#include "tenferro/linalg/linalg.hpp"
// Optimisers for eager parameters.
#include "tenferro/optim/optim.hpp"
