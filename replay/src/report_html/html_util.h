// Pieces of the report's page (report_html/): escaping, the chart geometry the page's script
// shares, the palette, and the sections' writers.
#pragma once

#include <nlohmann/json.hpp>

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "reservoir/replay/report.h"

namespace reservoir::replay::html {

// Text or an attribute value: & < > " ' escaped, and the ':' of a "://" or after "http"/"https"
// written as &#58; so that the file holds no URL a checker (or a viewer) could take for a link.
std::string esc(std::string_view text);
// JSON for a <script type="application/json">: ASCII only, '/' and '<' escaped (no "</script>",
// no "://"), and the ':' after "http"/"https" as \u003a.
std::string scriptJson(const nlohmann::json& j);

// The chart's geometry in SVG units (report.js reads the same from the page's data).
struct Geometry {
  static constexpr int kWidth = 1000, kHeight = 270;
  static constexpr int kX0 = 70, kX1 = 985;  // the plot's left and right edges
  static constexpr int kY0 = 22, kY1 = 212;  // its top and bottom
  static constexpr int kPlotWidth = kX1 - kX0;
};
nlohmann::json geometryJson();

// The colour of variant `v` (the recording is grey).
std::string_view variantColor(std::size_t v);
// A small square of that colour (an SVG, so it shows without the style sheet).
std::string swatch(std::size_t v);

// Tenths of an SVG unit as text ("123.4", "12").
std::string tenths(std::int64_t t);
// The band of a curve (min/max per drawn column) over columns [c0, c1), as a path (report.js: bandPath).
std::string bandPath(std::span<const std::int64_t> mins, std::span<const std::int64_t> maxs, std::size_t c0,
                     std::size_t c1, std::int64_t ymax);
std::int64_t yTenths(std::int64_t value, std::int64_t ymax);
std::int64_t xTenthsAt(std::int64_t position, std::int64_t p0, std::int64_t p1);
// 1, 2 or 5 times a power of ten, at least `raw` (report.js: niceStep).
std::int64_t niceStep(double raw);
std::string tickLabel(const CurveAxis& axis, std::int64_t position, std::int64_t step);

// The curves of rank `r` (both axes), and their data for the script (into `charts`).
std::string rankCharts(const Report& report, std::size_t r, std::int64_t unit, nlohmann::json& charts);
// The unit the curves' data is written in: 512 bytes (every block size is a multiple) unless a value is not.
std::int64_t curveUnit(const Report& report, const std::vector<std::size_t>& ranks);

// A stack as a list of frames, innermost first (at most `max_frames`).
std::string stackList(const traces::Snapshot& snap, StackId stack, std::size_t max_frames = 8);

// The sections after the curves, in the page's order.
std::string verdictSection(const Report& report);
std::string peakSection(const Report& report);
std::string pinsSection(const Report& report);
std::string sweepSection(const Report& report);
std::string ranksSection(const Report& report);
std::string factsSection(const Report& report);

// The page's inline style sheet and script (report.css, report.js, built in).
std::string_view pageCss();
std::string_view pageScript();

}  // namespace reservoir::replay::html
