// The command line's view options (--view, --cursor, --zoom, --search ...) applied to the window;
// batch mode (--screenshot, --export-plot): wait for the traces and the what-if runs, arrange the
// requested view, write the image, return the exit code.
#pragma once

#include "app/options.h"

namespace reservoir::gui {

class MainWindow;

// Waits (processing events) until every document is modelled or failed and no variant
// runs; false on timeout.
bool waitUntilIdle(MainWindow& window, int timeout_ms);
// Applies --view, --cursor, --zoom, --search ... to the window.
// `batch`: for a picture (the timeline view also gets most of the height).
void arrangeView(MainWindow& window, const AppOptions& options, bool batch);
int runBatch(MainWindow& window, const AppOptions& options);
// The same for a window the user works in: the view at once, and once more (cursor, zoom)
// when the traces are read and modelled, without waiting for them.
void arrangeWhenReady(MainWindow& window, const AppOptions& options);

}  // namespace reservoir::gui
