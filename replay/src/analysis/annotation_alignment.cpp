#include "reservoir/replay/annotation_alignment.h"

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "reservoir/replay/point.h"

namespace reservoir::replay {

namespace {

// Maps x through the knots: from[] -> to[], linear between knots, offset past the ends.
double mapThrough(const std::vector<std::pair<double, double>>& knots, double x, bool a_to_b) {
  if (knots.empty()) return x;
  const auto from = [&](std::size_t i) { return a_to_b ? knots[i].first : knots[i].second; };
  const auto to = [&](std::size_t i) { return a_to_b ? knots[i].second : knots[i].first; };
  if (x <= from(0)) return to(0) + (x - from(0));
  const std::size_t last = knots.size() - 1;
  if (x >= from(last)) return to(last) + (x - from(last));
  std::size_t lo = 0, hi = last;  // from(lo) < x < from(hi)
  while (hi - lo > 1) {
    const std::size_t mid = (lo + hi) / 2;
    (from(mid) <= x ? lo : hi) = mid;
  }
  const double t = (x - from(lo)) / (from(hi) - from(lo));
  return to(lo) + t * (to(hi) - to(lo));
}

// "ProfilerStep#12" -> "ProfilerStep#"; other names unchanged.
std::string folded(std::string_view name) {
  const auto hash = occurrenceSuffix(name);
  return std::string(hash == std::string_view::npos ? name : name.substr(0, hash + 1));
}

}  // namespace

double EventAlignment::toA(double b) const { return mapThrough(knots, b, false); }
double EventAlignment::toB(double a) const { return mapThrough(knots, a, true); }

EventAlignment alignOnStarts(std::span<const std::uint32_t> starts_a, std::span<const std::uint32_t> starts_b) {
  EventAlignment out;
  out.starts_a = starts_a.size();
  out.starts_b = starts_b.size();
  const std::size_t n = std::min(starts_a.size(), starts_b.size());
  for (std::size_t k = 0; k < n; ++k) {
    const double a = starts_a[k], b = starts_b[k];
    if (!out.knots.empty() && (a <= out.knots.back().first || b <= out.knots.back().second)) continue;
    out.knots.emplace_back(a, b);
  }
  return out;
}

bool annotationMatches(std::string_view recorded, std::string_view name) {
  if (recorded == name) return true;
  const std::string f = folded(recorded);
  if (f == recorded) return false;  // no step number
  return f == name || std::string_view(f).substr(0, f.size() - 1) == name;
}

Expected<std::vector<std::uint32_t>> annotationStarts(const traces::Snapshot& snap, std::size_t device_index,
                                                      std::string_view name) {
  // Each recorded name that matches, resolved as the point annotation:NAME:start is.
  std::set<std::string> names;
  for (const auto& a : snap.annotations)
    if (a.stage == "START" && annotationMatches(a.name, name)) names.insert(a.name);
  std::vector<std::uint32_t> starts;
  Point p;
  p.kind = Point::Kind::kAnnotationStart;
  p.annotation = std::string(name);
  p.text = "annotation:" + p.annotation + ":start";
  if (names.empty()) {
    auto none = resolvePoint(p, snap, device_index);  // its message names the closest annotations
    return none ? Status::error("annotation '" + p.annotation + "' is not in the trace") : none.status();
  }
  for (const auto& n : names) {
    p.annotation = n;
    auto gaps = resolvePoint(p, snap, device_index);
    if (!gaps) continue;  // recorded for another device
    for (const auto& g : *gaps) starts.push_back(g.boundary);
  }
  if (starts.empty()) return Status::error("annotation '" + std::string(name) + "' starts on no event of this device");
  std::sort(starts.begin(), starts.end());
  return starts;
}

Expected<EventAlignment> alignOnAnnotation(const traces::Snapshot& a, std::size_t device_a, const traces::Snapshot& b,
                                           std::size_t device_b, std::string_view name) {
  auto sa = annotationStarts(a, device_a, name);
  if (!sa) return sa.status();
  auto sb = annotationStarts(b, device_b, name);
  if (!sb) return sb.status();
  return alignOnStarts(*sa, *sb);
}

std::vector<std::string> alignableAnnotations(const traces::Snapshot& snap, std::size_t device_index) {
  const std::int64_t device = snap.devices.at(device_index).device;
  std::map<std::string, std::size_t> starts;
  for (const auto& a : snap.annotations)
    if (a.stage == "START" && (a.device < 0 || a.device == device)) ++starts[folded(a.name)];
  std::vector<std::pair<std::size_t, std::string>> by_count;
  for (const auto& [n, c] : starts)
    if (c >= 2) by_count.emplace_back(c, n);
  std::stable_sort(by_count.begin(), by_count.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
  std::vector<std::string> out;
  for (auto& [c, n] : by_count) out.push_back(std::move(n));
  return out;
}

}  // namespace reservoir::replay
