// Text for people: sizes as PyTorch prints them, times, stacks (plain and HTML).
#pragma once

#include <QString>

#include <cstdint>

#include "reservoir/traces/snapshot.h"

namespace reservoir::gui {

QString sizeText(std::int64_t bytes);                                 // "1.50 GiB", "-20.00 MiB"
QString exactSizeText(std::int64_t bytes);                            // "1.50 GiB (1610612736 bytes)"
QString timeText(std::int64_t us);                                    // "12.345 s", "1.2 ms"
QString addressText(std::uint64_t address);                           // "0x7f2a00000000"
QString frameText(const traces::Snapshot& snap, FrameId frame);       // "name (file.py:12)"
QString shortFrameText(const traces::Snapshot& snap, FrameId frame);  // "name (file.py:12)" without directories
QString stackText(const traces::Snapshot& snap, StackId stack, int max_frames = 12);
QString stackHtml(const traces::Snapshot& snap, StackId stack, int max_frames = 20);
// The innermost frame that is not PyTorch's own (torch/...), for one-line summaries.
QString topUserFrame(const traces::Snapshot& snap, StackId stack);
// "after:file.py:name" for a frame: a point the what-if engine understands.
QString pointForFrame(const traces::Snapshot& snap, FrameId frame, bool after = true);

}  // namespace reservoir::gui
