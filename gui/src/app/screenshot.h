// Batch mode (--screenshot, --export-plot): wait for the traces and the what-if runs,
// arrange the requested view, write the image, return the exit code.
#pragma once

#include "app/options.h"

namespace reservoir::gui {

class MainWindow;

// Waits (processing events) until every document is modelled or failed and no variant
// runs; false on timeout.
bool waitUntilIdle(MainWindow& window, int timeout_ms);
// Applies --view, --cursor, --zoom, --search ... to the window.
void arrangeView(MainWindow& window, const AppOptions& options);
int runBatch(MainWindow& window, const AppOptions& options);

}  // namespace reservoir::gui
