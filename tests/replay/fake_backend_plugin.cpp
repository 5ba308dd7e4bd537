// A backend plugin for plugins_test.cpp, built as reservoir-backend-torch.so into a folder of its
// own: with FAKE_PLUGIN_BUILD it claims another build's identity (a plugin from another version).
#include "reservoir/replay/backend.h"
#include "reservoir/replay/plugins.h"

namespace {

class FakeBackend : public reservoir::replay::ReplayBackend {
 public:
  [[nodiscard]] std::string name() const override { return "fake torch from a plugin"; }
  reservoir::Expected<reservoir::replay::BackendResult> run(const reservoir::replay::ReplayJob&) override {
    return reservoir::Status::error("the fake backend runs nothing");
  }
};

}  // namespace

extern "C" __attribute__((visibility("default"))) const char* reservoir_plugin_build() {
#ifdef FAKE_PLUGIN_BUILD
  return FAKE_PLUGIN_BUILD;
#else
  return reservoir::replay::pluginBuildIdentity();
#endif
}

extern "C" __attribute__((visibility("default"))) reservoir::replay::ReplayBackend* reservoir_make_backend() {
  return new FakeBackend();
}
