// reservoir-gui's start without a display: the offscreen platform for work that opens no
// window, a plain-words refusal (not Qt's abort) for a window nobody can see.
#include <gtest/gtest.h>

#include "app/options.h"
#include "app/platform.h"
#include "reservoir/core/version.h"

namespace reservoir::gui {
namespace {

PlatformEnvironment headless() {
  PlatformEnvironment e;
  e.display_platform = true;
  return e;
}

TEST(StartPlatform, WithoutADisplayPicturesAndTextsGoOffscreen) {
  const PlatformEnvironment e = headless();
  EXPECT_EQ(choosePlatform({"t.pickle", "--screenshot", "out.png"}, e), StartPlatform::kOffscreen);
  EXPECT_EQ(choosePlatform({"t.pickle", "--export-plot=out.svg"}, e), StartPlatform::kOffscreen);
  EXPECT_EQ(choosePlatform({"--help"}, e), StartPlatform::kOffscreen);
  EXPECT_EQ(choosePlatform({"--version"}, e), StartPlatform::kOffscreen);
  // A window is wanted: refused in words.
  EXPECT_EQ(choosePlatform({"t.pickle"}, e), StartPlatform::kNoDisplay);
  EXPECT_EQ(choosePlatform({"--", "--screenshot"}, e), StartPlatform::kNoDisplay) << "a file named --screenshot";
  EXPECT_NE(noDisplayMessage().find("--screenshot"), std::string::npos);
}

TEST(StartPlatform, ADisplayOrAChosenPlatformIsLeftAlone) {
  PlatformEnvironment x = headless();
  x.display = ":0";
  EXPECT_EQ(choosePlatform({"t.pickle"}, x), StartPlatform::kAsConfigured);
  PlatformEnvironment w = headless();
  w.wayland_display = "wayland-0";
  EXPECT_EQ(choosePlatform({"t.pickle", "--screenshot", "o.png"}, w), StartPlatform::kAsConfigured);
  PlatformEnvironment chosen = headless();
  chosen.qt_qpa_platform = "vnc";
  EXPECT_EQ(choosePlatform({"t.pickle"}, chosen), StartPlatform::kAsConfigured);
  PlatformEnvironment mac = headless();
  mac.display_platform = false;  // no DISPLAY there, and windows all the same
  EXPECT_EQ(choosePlatform({"t.pickle"}, mac), StartPlatform::kAsConfigured);
}

TEST(AppOptions, HelpAndVersionAreTextsToPrintNotErrors) {
  for (const char* flag : {"--version", "-v", "--help"}) {
    QString text;
    bool informational = false;
    EXPECT_FALSE(parseAppOptions({QStringLiteral("reservoir-gui"), QString::fromLatin1(flag)}, &text, &informational));
    EXPECT_TRUE(informational) << flag;
    EXPECT_FALSE(text.isEmpty()) << flag;
  }
  QString text;
  bool informational = false;
  EXPECT_FALSE(parseAppOptions({QStringLiteral("reservoir-gui"), QStringLiteral("--view"), QStringLiteral("nope")},
                               &text, &informational));
  EXPECT_FALSE(informational) << "a wrong option is an error";
  QString version;
  parseAppOptions({QStringLiteral("reservoir-gui"), QStringLiteral("--version")}, &version, &informational);
  EXPECT_EQ(version, QStringLiteral("reservoir-gui " RESERVOIR_VERSION));
}

}  // namespace
}  // namespace reservoir::gui
