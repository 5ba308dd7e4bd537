// The GPU backends this build has (internal to replay/gpu).
#pragma once

#include <memory>

#include "reservoir/replay/backend.h"

namespace reservoir::replay::gpu {

#ifdef RESERVOIR_HAVE_CUDA_BACKEND
std::unique_ptr<ReplayBackend> makeCudaBackend();
#endif
#ifdef RESERVOIR_HAVE_TORCH_BACKEND
std::unique_ptr<ReplayBackend> makeTorchBackend();
#endif

}  // namespace reservoir::replay::gpu
