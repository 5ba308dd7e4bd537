// The GPU backends (internal to replay/gpu/): each is built into its own plugin
// (backend_plugin.cpp), which the reservoir binary loads when a replay asks for it.
#pragma once

#include <memory>

#include "reservoir/replay/backend.h"

namespace reservoir::replay::gpu {

std::unique_ptr<ReplayBackend> makeCudaBackend();   // reservoir-backend-cuda.so
std::unique_ptr<ReplayBackend> makeTorchBackend();  // reservoir-backend-torch.so

}  // namespace reservoir::replay::gpu
