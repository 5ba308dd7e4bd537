#include "app/platform.h"

#include <cstdlib>

namespace reservoir::gui {

namespace {

bool isOption(const std::string& arg, const char* name) {
  const std::string n(name);
  return arg == n || arg.rfind(n + "=", 0) == 0;
}

// Work that opens no window: a picture written to a file, or a text printed.
bool opensNoWindow(const std::vector<std::string>& args) {
  for (const std::string& a : args) {
    if (a == "--") break;
    if (isOption(a, "--screenshot") || isOption(a, "--export-plot")) return true;
    if (a == "-h" || a == "--help" || a == "--help-all" || a == "-v" || a == "--version") return true;
  }
  return false;
}

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

StartPlatform choosePlatform(const std::vector<std::string>& args, const PlatformEnvironment& e) {
  if (!e.qt_qpa_platform.empty() || !e.display_platform) return StartPlatform::kAsConfigured;
  if (!e.display.empty() || !e.wayland_display.empty()) return StartPlatform::kAsConfigured;
  return opensNoWindow(args) ? StartPlatform::kOffscreen : StartPlatform::kNoDisplay;
}

PlatformEnvironment platformEnvironment() {
  PlatformEnvironment e;
  e.qt_qpa_platform = env("QT_QPA_PLATFORM");
  e.display = env("DISPLAY");
  e.wayland_display = env("WAYLAND_DISPLAY");
#if defined(__APPLE__) || defined(_WIN32)
  e.display_platform = false;
#endif
  return e;
}

std::string noDisplayMessage() {
  return "reservoir-gui: there is no display to open a window on (DISPLAY and WAYLAND_DISPLAY are not set).\n"
         "On a machine without one, write a picture instead: reservoir-gui TRACE --screenshot OUT.png\n"
         "(or --export-plot OUT.svg), or write an HTML report: reservoir report TRACE --html OUT.html";
}

}  // namespace reservoir::gui
