// What the plots draw from, built off the GUI thread once per stage and then immutable:
// min/max pyramids over the per-event series (stage 1) and the modelled per-op timeline
// (stage 2), and each what-if variant's predicted reserved curve.
#pragma once

#include <cstdint>
#include <memory>
#include <vector>

#include "geometry/bands.h"
#include "geometry/lod.h"
#include "reservoir/replay/peak_explain.h"
#include "reservoir/replay/session.h"

namespace reservoir::gui {

struct RecordedPlot {
  std::shared_ptr<const replay::LoadStage> trace;
  MinMaxPyramid reserved, live, mapped;
  std::vector<std::uint32_t> annotation_events;  // sorted, parallel to trace->annotations
  std::vector<std::uint32_t> stack_colour;       // per stack id: its bands' colour (0xAARRGGBB)
  std::vector<std::uint8_t> event_size_class;    // see LifetimeView
  std::vector<std::uint32_t> stack_first;        // per stack id: its first allocation (LifetimeView)
  [[nodiscard]] LifetimeView lifetimes() const;
  [[nodiscard]] std::size_t events() const { return trace->series.size(); }
  // Pixel columns of a time axis over the events (their nondecreasing times).
  [[nodiscard]] std::vector<ColumnRange> timeColumns(const Axis& x, int width) const;
};

struct ModelPlot {
  std::shared_ptr<const replay::ModelStage> model;
  MinMaxPyramid allocated_lod, active_lod;
  std::int64_t peak_allocated = 0;
  std::uint32_t peak_allocated_event = 0;
  // Where the baseline's peak reserved came from (replay::peakOrigin, once per model: the marker's
  // tooltip, the facts and the climb drawn on the timeline read it).
  replay::PeakOrigin reserved_origin;
};

// A per-op reserved curve (a what-if variant): its changes, and the pyramid built over them.
struct OpCurve {
  replay::StepSeries reserved;
  MinMaxPyramid lod;  // reads `reserved`
};

std::shared_ptr<const RecordedPlot> makeRecordedPlot(std::shared_ptr<const replay::LoadStage> trace);
// A colour per stack (RecordedPlot::stack_colour), in the order of the stacks' first allocations,
// such that stacks whose blocks lie on one another (at full detail, and with the blocks under
// 1/1000 and 1/100 of the peak merged out, as at coarse zooms) get clearly different colours.
std::vector<std::uint32_t> stackColours(const RecordedPlot& p);
std::shared_ptr<const ModelPlot> makeModelPlot(std::shared_ptr<const replay::ModelStage> model);
// The reserved curve of a run's compact curves (RunSettings::keep_curves), taken over.
std::shared_ptr<const OpCurve> makeOpCurve(replay::StepSeries reserved);

}  // namespace reservoir::gui
