// reservoir-gui's entry point: parses the command line, opens the traces, shows the main
// window (or writes a screenshot and exits).
#pragma once

namespace reservoir::gui {

int runApp(int argc, char** argv);

}  // namespace reservoir::gui
