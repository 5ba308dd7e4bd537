// The entry points of one GPU backend plugin (replay/plugins.h): reservoir-backend-cuda.so or
// reservoir-backend-torch.so, chosen by RESERVOIR_PLUGIN_CUDA / RESERVOIR_PLUGIN_TORCH. The
// reservoir binary loads it when a replay asks for that backend, so the binary itself needs
// neither the CUDA runtime nor LibTorch to start.
#include "gpu_backends.h"
#include "reservoir/replay/option_text.h"
#include "reservoir/replay/plugins.h"

#define RESERVOIR_PLUGIN_EXPORT extern "C" __attribute__((visibility("default")))

RESERVOIR_PLUGIN_EXPORT const char* reservoir_plugin_build() { return reservoir::replay::pluginBuildIdentity(); }

RESERVOIR_PLUGIN_EXPORT reservoir::replay::ReplayBackend* reservoir_make_backend() {
  // This plugin has its own copy of the reader (the torch backend reads its own recording): the
  // same memory cap as the binary that loads it.
  if (!reservoir::replay::applyMemoryCapFromEnvironment().ok()) return nullptr;
#if defined(RESERVOIR_PLUGIN_CUDA)
  return reservoir::replay::gpu::makeCudaBackend().release();
#elif defined(RESERVOIR_PLUGIN_TORCH)
  return reservoir::replay::gpu::makeTorchBackend().release();
#else
#error "backend_plugin.cpp: define RESERVOIR_PLUGIN_CUDA or RESERVOIR_PLUGIN_TORCH"
#endif
}
