#include "model_compare.h"

#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

namespace reservoir::test {
namespace {

using traces::Snapshot;

std::string frameText(const Snapshot& s, FrameId id) {
  const traces::Frame& f = s.frames[id.value()];
  return fmt::format("{}:{} {}", s.str(f.filename), f.line, s.str(f.name));
}

std::string stackText(const Snapshot& s, StackId id) {
  std::string text = "[";
  for (FrameId f : s.stack(id)) text += frameText(s, f) + "; ";
  return text + "]";
}

std::string optText(const Snapshot& s, StringId id) {
  return id.valid() ? "'" + std::string(s.str(id)) + "'" : "absent";
}

// Returns "" when equal, else what differs.
class Differ {
 public:
  Differ(const Snapshot& a, const Snapshot& b) : a_(a), b_(b) {}

  std::string run() {
    for (auto step : {&Differ::frames, &Differ::devices, &Differ::segments, &Differ::settings, &Differ::annotations,
                      &Differ::anomalies}) {
      std::string d = (this->*step)();
      if (!d.empty()) return d;
    }
    return {};
  }

 private:
  template <typename T>
  static std::string diff(const std::string& what, const T& x, const T& y) {
    return x == y ? std::string() : fmt::format("{}: expected {}, got {}", what, x, y);
  }

  std::string frames() {
    std::vector<std::string> fa, fb;
    for (std::uint32_t i = 0; i < a_.frames.size(); ++i) fa.push_back(frameText(a_, FrameId(i)));
    for (std::uint32_t i = 0; i < b_.frames.size(); ++i) fb.push_back(frameText(b_, FrameId(i)));
    std::sort(fa.begin(), fa.end());
    std::sort(fb.begin(), fb.end());
    if (fa != fb) return fmt::format("distinct frames differ ({} vs {})", fa.size(), fb.size());
    return diff("distinct stacks", a_.stackCount(), b_.stackCount());
  }

  std::string event(const std::string& at, const traces::TraceEvent& x, const traces::TraceEvent& y,
                    std::int64_t x_time_us, std::int64_t y_time_us) {
    std::string d = diff(at + ".action", std::string(actionName(x.action)), std::string(actionName(y.action)));
    if (d.empty()) d = diff(at + ".addr", x.addr, y.addr);
    if (d.empty()) d = diff(at + ".size", x.size, y.size);
    if (d.empty()) d = diff(at + ".stream", a_.stream(x), b_.stream(y));
    if (d.empty()) d = diff(at + ".time_us", x_time_us, y_time_us);
    const traces::EventExtra& xx = a_.extra(x);
    const traces::EventExtra& yx = b_.extra(y);
    if (d.empty()) d = diff(at + ".has_frames", xx.has_frames, yx.has_frames);
    if (d.empty()) d = diff(at + ".frames", stackText(a_, x.stack), stackText(b_, y.stack));
    if (d.empty()) d = diff(at + ".compile_context", optText(a_, xx.compile_context), optText(b_, yx.compile_context));
    if (d.empty()) d = diff(at + ".user_metadata", optText(a_, xx.user_metadata), optText(b_, yx.user_metadata));
    return d;
  }

  std::string devices() {
    if (auto d = diff("device count", a_.devices.size(), b_.devices.size()); !d.empty()) return d;
    for (std::size_t i = 0; i < a_.devices.size(); ++i) {
      const auto& x = a_.devices[i];
      const auto& y = b_.devices[i];
      const std::string at = fmt::format("device_traces[{}]", i);
      if (auto d = diff(at + ".device", x.device, y.device); !d.empty()) return d;
      if (auto d = diff(at + " length", x.events.size(), y.events.size()); !d.empty()) return d;
      for (std::size_t j = 0; j < x.events.size(); ++j)
        if (auto d = event(fmt::format("{}[{}]", at, j), x.events[j], y.events[j], x.timeOf(j), y.timeOf(j));
            !d.empty())
          return d;
    }
    return {};
  }

  std::string block(const std::string& at, const traces::BlockInfo& x, const traces::BlockInfo& y) {
    std::string d = diff(at + ".address", x.address, y.address);
    if (d.empty()) d = diff(at + ".size", x.size, y.size);
    if (d.empty()) d = diff(at + ".requested_size", x.requested_size, y.requested_size);
    if (d.empty()) d = diff(at + ".state", std::string(blockStateName(x.state)), std::string(blockStateName(y.state)));
    if (d.empty()) d = diff(at + ".frames", stackText(a_, x.stack), stackText(b_, y.stack));
    return d;
  }

  std::string segment(const std::string& at, const traces::SegmentInfo& x, const traces::SegmentInfo& y) {
    std::string d = diff(at + ".device", x.device, y.device);
    if (d.empty()) d = diff(at + ".address", x.address, y.address);
    if (d.empty()) d = diff(at + ".total_size", x.total_size, y.total_size);
    if (d.empty()) d = diff(at + ".allocated_size", x.allocated_size, y.allocated_size);
    if (d.empty()) d = diff(at + ".active_size", x.active_size, y.active_size);
    if (d.empty()) d = diff(at + ".requested_size", x.requested_size, y.requested_size);
    if (d.empty()) d = diff(at + ".stream", x.stream, y.stream);
    if (d.empty()) d = diff(at + ".is_large", x.is_large, y.is_large);
    if (d.empty()) d = diff(at + ".is_expandable", x.is_expandable, y.is_expandable);
    if (d.empty()) d = diff(at + ".pool.first", x.pool.first, y.pool.first);
    if (d.empty()) d = diff(at + ".pool.second", x.pool.second, y.pool.second);
    if (d.empty()) d = diff(at + ".frames", stackText(a_, x.stack), stackText(b_, y.stack));
    if (d.empty()) d = diff(at + ".first_block", x.first_block, y.first_block);
    if (d.empty()) d = diff(at + ".block_count", x.block_count, y.block_count);
    for (std::size_t i = 0; d.empty() && i < x.block_count; ++i)
      d = block(fmt::format("{}.blocks[{}]", at, i), a_.blocksOf(x)[i], b_.blocksOf(y)[i]);
    return d;
  }

  std::string segments() {
    if (auto d = diff("segment count", a_.segments.size(), b_.segments.size()); !d.empty()) return d;
    if (auto d = diff("block count", a_.blocks.size(), b_.blocks.size()); !d.empty()) return d;
    for (std::size_t i = 0; i < a_.segments.size(); ++i)
      if (auto d = segment(fmt::format("segments[{}]", i), a_.segments[i], b_.segments[i]); !d.empty()) return d;
    return {};
  }

  std::string settings() {
    const auto& x = a_.settings;
    const auto& y = b_.settings;
    std::string d = diff("settings.present", x.present, y.present);
    if (d.empty()) d = diff("settings.alloc_conf", x.alloc_conf, y.alloc_conf);
    if (d.empty()) d = diff("settings.max_split_size", x.max_split_size, y.max_split_size);
    if (d.empty())
      d = diff("settings.garbage_collection_threshold", x.garbage_collection_threshold, y.garbage_collection_threshold);
    if (d.empty()) d = diff("settings.expandable_segments", x.expandable_segments, y.expandable_segments);
    if (d.empty() && x.release_lock_on_cudamalloc != y.release_lock_on_cudamalloc)
      d = "settings.release_lock_on_cudamalloc";
    if (d.empty() && x.graph_capture_record_stream_reuse != y.graph_capture_record_stream_reuse)
      d = "settings.graph_capture_record_stream_reuse";
    if (d.empty() && x.pinned_num_register_threads != y.pinned_num_register_threads)
      d = "settings.pinned_num_register_threads";
    if (d.empty() && x.pinned_use_cuda_host_register != y.pinned_use_cuda_host_register)
      d = "settings.pinned_use_cuda_host_register";
    if (d.empty())
      d = diff("settings.roundup_power2_divisions", fmt::format("{}", fmt::join(x.roundup_power2_divisions, ",")),
               fmt::format("{}", fmt::join(y.roundup_power2_divisions, ",")));
    for (std::size_t i = 0; d.empty() && i < std::max(x.other.size(), y.other.size()); ++i) {
      auto text = [](const auto& v, std::size_t j) { return j < v.size() ? v[j].first + "=" + v[j].second : "-"; };
      d = diff(fmt::format("settings.other[{}]", i), text(x.other, i), text(y.other, i));
    }
    return d;
  }

  std::string annotations() {
    if (auto d = diff("annotation count", a_.annotations.size(), b_.annotations.size()); !d.empty()) return d;
    for (std::size_t i = 0; i < a_.annotations.size(); ++i) {
      const auto& x = a_.annotations[i];
      const auto& y = b_.annotations[i];
      const auto at = fmt::format("external_annotations[{}]", i);
      std::string d = diff(at + ".stage", x.stage, y.stage);
      if (d.empty()) d = diff(at + ".name", x.name, y.name);
      if (d.empty()) d = diff(at + ".device", x.device, y.device);
      if (d.empty()) d = diff(at + ".time_us", x.time_us, y.time_us);
      if (!d.empty()) return d;
    }
    return {};
  }

  std::string anomalies() {
    for (std::size_t i = 0; i < traces::AnomalyCounters::kCount; ++i) {
      const auto kind = static_cast<traces::Anomaly>(i);
      const std::string what = "anomaly " + std::string(anomalyInfo(kind).name);
      if (auto d = diff(what, a_.anomalies.count(kind), b_.anomalies.count(kind)); !d.empty()) return d;
    }
    return {};
  }

  const Snapshot& a_;
  const Snapshot& b_;
};

}  // namespace

::testing::AssertionResult sameModel(const traces::Snapshot& expected, const traces::Snapshot& actual) {
  const std::string d = Differ(expected, actual).run();
  if (d.empty()) return ::testing::AssertionSuccess();
  return ::testing::AssertionFailure() << d;
}

}  // namespace reservoir::test
