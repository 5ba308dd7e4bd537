// Registration of the GPU replay backends (replay/gpu/): call once before makeBackend("torch")
// or makeBackend("cuda"). Only builds that found CUDA or LibTorch have this library.
#pragma once

namespace reservoir::replay {

// Registers every GPU backend this build has ("cuda", "torch").
void registerGpuBackends();

}  // namespace reservoir::replay
