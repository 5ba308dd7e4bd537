#include "gpu_backends.h"

#include "reservoir/replay/gpu_backends.h"

namespace reservoir::replay {

void registerGpuBackends() {
#ifdef RESERVOIR_HAVE_CUDA_BACKEND
  registerBackend("cuda", &gpu::makeCudaBackend);
#endif
#ifdef RESERVOIR_HAVE_TORCH_BACKEND
  registerBackend("torch", &gpu::makeTorchBackend);
#endif
}

}  // namespace reservoir::replay
