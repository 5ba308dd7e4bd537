// Where reservoir-gui draws when the environment names no Qt platform: a window on the user's
// display, the offscreen platform for work that opens no window (--screenshot, --export-plot,
// --help, --version), or nothing, with a plain-words reason, when a window is wanted and there
// is no display to put it on (Qt would abort with "could not load the Qt platform plugin").
#pragma once

#include <string>
#include <vector>

namespace reservoir::gui {

enum class StartPlatform { kAsConfigured, kOffscreen, kNoDisplay };

struct PlatformEnvironment {
  std::string qt_qpa_platform;  // QT_QPA_PLATFORM
  std::string display;          // DISPLAY
  std::string wayland_display;  // WAYLAND_DISPLAY
  bool display_platform = true;  // the system shows windows through DISPLAY / WAYLAND_DISPLAY (Linux, BSD)
};

// `args`: argv without the program name.
StartPlatform choosePlatform(const std::vector<std::string>& args, const PlatformEnvironment& env);
PlatformEnvironment platformEnvironment();  // of this process
// The message for kNoDisplay.
std::string noDisplayMessage();

}  // namespace reservoir::gui
