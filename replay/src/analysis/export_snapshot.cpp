#include "reservoir/replay/export.h"
#include "reservoir/replay/segment_views.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_map>

#include "reservoir/traces/stack_interner.h"

namespace reservoir::replay {
namespace {

// Re-interns stacks of the source snapshot into the exported one.
class StackCopier {
 public:
  StackCopier(const traces::Snapshot& from, traces::Snapshot* to) : from_(from), to_(to), interner_(to) {}
  StackId copy(StackId id) {
    auto it = done_.find(id.value());
    if (it != done_.end()) return it->second;
    std::vector<FrameId> frames;
    for (FrameId f : from_.stack(id)) {
      const auto& fr = from_.frames[f.value()];
      frames.push_back(interner_.frame(from_.str(fr.filename), fr.line, from_.str(fr.name)));
    }
    const StackId out = interner_.stack(frames);
    done_.emplace(id.value(), out);
    return out;
  }

 private:
  const traces::Snapshot& from_;
  traces::Snapshot* to_;
  traces::StackInterner interner_;
  std::unordered_map<std::uint32_t, StackId> done_;
};

traces::RecordedSettings settingsOf(const sim::AllocatorConfig& c) {
  traces::RecordedSettings s;
  s.present = true;
  s.alloc_conf = c.last_settings;
  s.max_split_size = c.maxSplitSet() ? static_cast<std::int64_t>(c.max_split_size) : -1;
  s.garbage_collection_threshold = c.garbage_collection_threshold;
  s.expandable_segments = c.expandable_segments;
  for (std::size_t i = 0; i < s.roundup_power2_divisions.size(); ++i)
    s.roundup_power2_divisions[i] = c.roundup_power2_divisions[i];
  return s;
}

}  // namespace

Expected<traces::Snapshot> exportRun(const PreparedTrace& p, const std::vector<ResolvedEdit>& edits,
                                     RunSettings settings) {
  std::vector<EmittedEvent> events;
  settings.record_events = &events;
  settings.analyze_peak = false;
  const traces::Snapshot& src = *p.snapshot;
  const auto& src_trace = src.devices.at(p.device_index);
  traces::Snapshot out;
  StackCopier stacks(src, &out);
  stacks.copy(StackId(0));  // the empty stack first
  // Replay, collecting the model's events and its final state.
  RunResult run = replayProgram(p, edits, settings);
  (void)run;
  auto stackOfTag = [&](std::uint64_t tag) -> StackId {
    return tag == 0 ? StackId(0) : p.allocationStack(tag - 1);
  };
  out.devices.resize(src.devices.size());
  for (std::size_t d = 0; d < src.devices.size(); ++d) out.devices[d].device = src.devices[d].device;
  auto& trace = out.devices[p.device_index];
  trace.events.reserve(events.size());
  std::optional<traces::EventExtra> extra;  // set at the first entry (its strings after its stack's)
  const auto& ops = p.program.ops;
  for (const auto& em : events) {
    traces::TraceEvent e;
    e.action = em.event.action;
    e.addr = em.event.addr;
    e.size = em.event.size;
    const Op* op = em.op < ops.size() ? &ops[em.op] : nullptr;
    const std::uint32_t ev =
        op ? op->first_event : (src_trace.events.empty() ? 0 : static_cast<std::uint32_t>(src_trace.events.size() - 1));
    const bool per_alloc = e.action == traces::Action::kAlloc || e.action == traces::Action::kFreeRequested ||
                           e.action == traces::Action::kFreeCompleted;
    e.stack = stacks.copy(per_alloc ? stackOfTag(em.event.tag) : (op ? p.opStack(*op) : StackId(0)));
    if (!extra) {
      extra.emplace();
      extra->has_frames = true;
      extra->compile_context = out.strings.intern("N/A");
      extra->user_metadata = out.strings.intern("");
    }
    extra->stream = em.event.stream;
    e.setExtraId(out.extras.intern(*extra));
    trace.push(e, src_trace.timeOf(ev));
  }
  // The final state, from a second replay that stops at the end (the run above has gone).
  RunSettings end = settings;
  end.record_events = nullptr;
  StateIndex index(p, edits, end, 1u << 30);
  const auto segs =
      index.segmentsAfterOp(p.program.ops.empty() ? kNoOp : static_cast<std::uint32_t>(p.program.ops.size() - 1));
  for (const auto& s : segs)
    appendSegment(out, s, src_trace.device, [&](std::uint64_t tag) { return stacks.copy(stackOfTag(tag)); });
  out.settings = settingsOf(settings.config);
  out.annotations = src.annotations;
  out.pickle_protocol = 4;
  return out;
}

std::string timelineCsv(const PreparedTrace& p, const RunResult& run) {
  std::string csv = "event,time_us,allocated,reserved,active,requested\n";
  const auto& trace = p.snapshot->devices.at(p.device_index);
  for (std::size_t j = 0; j < run.timeline.size() && j < p.program.ops.size(); ++j) {
    const auto& op = p.program.ops[j];
    const std::uint32_t ev = op.end_event > 0 ? op.end_event - 1 : 0;
    const auto& t = run.timeline[j];
    csv += fmt::format("{},{},{},{},{},{}\n", ev, trace.timeOf(ev), t.allocated, t.reserved, t.active, t.requested);
  }
  return csv;
}

}  // namespace reservoir::replay
