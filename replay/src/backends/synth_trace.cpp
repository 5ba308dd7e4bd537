// Synthetic traces recorded by the model itself: a random workload of allocations and frees on
// two streams, some freed with a record_stream use, with periodic empty_cache calls. They are
// as long as wanted (a million events and more), so the GPU backends can be checked against
// the model at a scale no captured trace covers.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <map>
#include <optional>
#include <random>
#include <unordered_map>

#include "reservoir/replay/backend.h"
#include "reservoir/replay/segment_views.h"
#include "reservoir/traces/stack_interner.h"

namespace reservoir::replay {
namespace {

constexpr sim::Addr kTop = 0x7f0000000000ull;
constexpr sim::ByteCount kAlign = 2 * sim::kMiB;

// A driver for recording: top-down 2 MiB-aligned placement, no capacity limit (the workload
// keeps itself under its budget), record_stream work done at a request index chosen by the
// workload.
class SynthDevice final : public sim::DeviceModel {
 public:
  explicit SynthDevice(sim::ByteCount total) : total_(total) {}
  void setRequest(std::uint64_t r) { request_ = r; }
  void completeAt(std::uint64_t tag, std::uint64_t request) { due_[tag] = request; }

  [[nodiscard]] sim::ByteCount totalMemory() const override { return total_; }
  std::optional<sim::Addr> cudaMalloc(sim::ByteCount size, sim::StreamId) override {
    used_ += size;
    return place(size, kAlign);
  }
  void cudaFree(sim::Addr addr, sim::ByteCount size) override {
    used_ -= size;
    live_.erase(addr);
  }
  sim::Addr reserveAddress(sim::ByteCount size, sim::ByteCount page, sim::StreamId) override {
    return place(size, std::max(page, kAlign));
  }
  void releaseAddress(sim::Addr addr, sim::ByteCount) override { live_.erase(addr); }
  bool mapPages(sim::Addr, sim::ByteCount size, sim::StreamId) override {
    used_ += size;
    return true;
  }
  void unmapPages(sim::Addr, sim::ByteCount size) override { used_ -= size; }
  sim::ByteCount deviceFree() override { return total_ > used_ ? total_ - used_ : 0; }
  void pollEvents(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& completed) override {
    std::vector<sim::StreamId> blocked;
    for (std::size_t i = 0; i < outstanding.size(); ++i) {
      const auto& ev = outstanding[i];
      if (std::find(blocked.begin(), blocked.end(), ev.stream) != blocked.end()) continue;
      if (dueOf(ev.tag) <= request_)
        completed.push_back(i);
      else
        blocked.push_back(ev.stream);
    }
  }
  void syncOrder(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& order) override {
    // A synchronization retires each stream's events in the order they were recorded.
    for (std::size_t i = 0; i < outstanding.size(); ++i) order.push_back(i);
  }

 private:
  [[nodiscard]] std::uint64_t dueOf(std::uint64_t tag) const {
    auto it = due_.find(tag);
    return it == due_.end() ? ~std::uint64_t{0} : it->second;
  }
  sim::Addr place(sim::ByteCount size, sim::ByteCount align) {
    const sim::ByteCount rounded = (size + align - 1) / align * align;
    sim::Addr a = (floor_ - rounded) / align * align;
    floor_ = a;
    live_[a] = rounded;
    return a;
  }

  sim::ByteCount total_;
  sim::ByteCount used_ = 0;
  sim::Addr floor_ = kTop;
  std::uint64_t request_ = 0;
  std::map<sim::Addr, sim::ByteCount> live_;
  std::unordered_map<std::uint64_t, std::uint64_t> due_;
};

class TraceSink final : public sim::EventSink {
 public:
  TraceSink(traces::Snapshot& snapshot, traces::DeviceTrace& trace, const std::uint64_t& request)
      : snap_(snapshot), trace_(trace), request_(request) {}
  std::optional<StackId> stack;  // the entries' frames from here on (none: no `frames` key)
  void onEvent(const sim::SimEvent& e) override {
    traces::TraceEvent t;
    t.action = e.action;
    t.addr = e.addr;
    t.size = e.size;
    snap_.editExtra(t, [&](traces::EventExtra& x) {
      x.stream = e.stream;
      x.has_frames = stack.has_value();
    });
    if (stack) t.stack = *stack;
    trace_.push(t, static_cast<std::int64_t>(1'700'000'000'000'000ull + request_));
  }

 private:
  traces::Snapshot& snap_;  // its extras hold the entries' streams
  traces::DeviceTrace& trace_;
  const std::uint64_t& request_;
};

struct Live {
  sim::BlockHandle handle;
  std::uint64_t tag;
  sim::ByteCount size;
  sim::StreamId stream;
};

// What torch's snapshot records beside the trace: allocator_settings (the string and the typed
// fields) and the final segments with their blocks.
void recordFinalState(const std::string& settings, const sim::AllocatorConfig& config,
                      const sim::CachingAllocator& model, traces::Snapshot& snap) {
  traces::RecordedSettings& rs = snap.settings;
  rs.present = true;
  rs.alloc_conf = settings;
  rs.max_split_size = config.maxSplitSet() ? static_cast<std::int64_t>(config.max_split_size) : -1;
  rs.garbage_collection_threshold = config.garbage_collection_threshold;
  rs.expandable_segments = config.expandable_segments;
  rs.release_lock_on_cudamalloc = config.release_lock_on_cudamalloc;
  for (std::size_t i = 0; i < rs.roundup_power2_divisions.size() && i < sim::kRoundupIntervals; ++i)
    rs.roundup_power2_divisions[i] = config.roundup_power2_divisions[i];
  for (const sim::SegmentView& s : model.segments()) appendSegment(snap, s, 0);
}

// Training steps (SynthOptions::step_requests): a stack per phase of a step, each under the step's
// frame, so that a step's phases are points a sweep places cleanups at.
class Steps {
 public:
  static constexpr std::size_t kPhases = 8;
  Steps(traces::Snapshot& snap, std::size_t requests) : requests_(requests) {
    if (!on()) return;  // no frames at all, as before steps were asked for
    traces::StackInterner interner(&snap);
    interner.emptyStack();
    const FrameId step = interner.frame("train.py", 10, "train_step");
    const std::array<FrameId, 1> outside{interner.frame("train.py", 5, "main")};
    between_ = interner.stack(outside);
    for (std::size_t k = 0; k < kPhases; ++k) {
      const FrameId phase = interner.frame("model.py", static_cast<std::int64_t>(20 + k), fmt::format("phase_{}", k));
      const std::array<FrameId, 2> frames{phase, step};  // innermost first
      stacks_[k] = interner.stack(frames);
    }
  }
  [[nodiscard]] bool on() const { return requests_ > 0; }
  [[nodiscard]] bool startsAt(std::uint64_t request) const { return on() && request % requests_ == 0; }
  // Where the last step's leftovers are freed: outside the step, as a training loop does.
  [[nodiscard]] StackId between() const { return between_; }
  [[nodiscard]] StackId stackAt(std::uint64_t request) const {
    return stacks_[request % requests_ * kPhases / requests_];
  }

 private:
  std::size_t requests_;
  std::array<StackId, kPhases> stacks_{};
  StackId between_;
};

}  // namespace

Expected<SynthTrace> synthesizeTrace(const SynthOptions& o) {
  // Each empty_cache takes a request's place: every request would be one (found by fuzzing).
  if (o.empty_cache_every == 1)
    return Status::usage("empty_cache every 1 request leaves none for allocations (give 0 for never, or 2 or more)");
  if (o.events > kMaxSynthEvents)
    return Status::usage(
        fmt::format("a synthetic trace of {} entries is too large: at most {} (about 75 bytes of "
                    "memory each)",
                    o.events, kMaxSynthEvents));
  auto config = sim::parseAllocConf(o.settings);
  if (!config) return Status::error("synthetic trace settings: " + config.message());
  SynthTrace out;
  traces::Snapshot& snap = out.snapshot;
  snap.pickle_protocol = 4;
  snap.devices.emplace_back();  // device 0
  traces::DeviceTrace& trace = snap.devices.back();
  trace.events.reserve(o.events + 64);
  trace.times.reserve(o.events + 64, 1);  // a request a microsecond: a byte an entry

  std::uint64_t request = 0;
  SynthDevice device(o.total_memory);
  TraceSink sink(snap, trace, request);
  sim::CachingAllocator model(*config, &device, &sink);

  std::mt19937_64 rng(o.seed);
  std::uniform_real_distribution<double> unit(0.0, 1.0);
  auto logUniform = [&](double lo, double hi) {
    return static_cast<sim::ByteCount>(std::exp(std::log(lo) + unit(rng) * (std::log(hi) - std::log(lo))));
  };
  auto sampleSize = [&]() -> sim::ByteCount {
    const double u = unit(rng);
    const double mib = static_cast<double>(sim::kMiB);
    if (u < 0.55) return std::max<sim::ByteCount>(1, logUniform(1.0, mib));
    if (u < 0.90) return logUniform(mib, 64 * mib);
    if (u < 0.99) return logUniform(64 * mib, 512 * mib);
    return logUniform(512 * mib, 2048 * mib);
  };

  const Steps steps(snap, o.step_requests);
  std::vector<Live> live;
  sim::ByteCount live_bytes = 0;
  std::uint64_t next_tag = 1;
  const double budget = static_cast<double>(o.budget);
  // A budget too small for any request (0 bytes) would make no entry ever: stop instead of spinning.
  constexpr std::uint64_t kMaxIdleRequests = 1'000'000;
  std::uint64_t last_progress = 0;
  std::size_t last_events = 0;
  while (trace.events.size() < o.events) {
    if (trace.events.size() != last_events) {
      last_events = trace.events.size();
      last_progress = request;
    } else if (request - last_progress > kMaxIdleRequests) {
      return Status::usage(
          fmt::format("synthetic workload: no trace entry in {} requests (a budget of {} bytes "
                      "is too small for any allocation)",
                      kMaxIdleRequests, o.budget));
    }
    device.setRequest(request);
    if (steps.startsAt(request)) {  // what the last step left live dies; the draws start again
      sink.stack = steps.between();
      for (const Live& l : live) model.free(l.handle);
      live.clear();
      live_bytes = 0;
      rng.seed(o.seed);
    }
    if (steps.on()) sink.stack = steps.stackAt(request);
    if (o.empty_cache_every > 0 && request % o.empty_cache_every == o.empty_cache_every - 1) {
      model.emptyCache();
      ++request;
      continue;
    }
    // Lean to allocating while under half the budget, to freeing above it.
    const double p_malloc = static_cast<double>(live_bytes) < 0.5 * budget ? 0.56 : 0.44;
    bool do_malloc = live.empty() || unit(rng) < p_malloc;
    sim::ByteCount size = 0;
    if (do_malloc) {
      size = sampleSize();
      if (static_cast<double>(live_bytes + size) > budget) do_malloc = false;
    }
    if (do_malloc) {
      const sim::StreamId stream = unit(rng) < o.side_fraction ? o.side_stream : 0;
      const std::uint64_t tag = next_tag++;
      const auto res = model.malloc(size, stream, tag);
      if (!res.ok())
        return Status::error(fmt::format("synthetic workload: malloc({}) failed at request {}", size, request));
      live.push_back(Live{res.block, tag, size, stream});
      live_bytes += size;
    } else if (!live.empty()) {
      std::uniform_int_distribution<std::size_t> pick(0, live.size() - 1);
      const std::size_t k = pick(rng);
      const Live victim = live[k];
      live[k] = live.back();
      live.pop_back();
      live_bytes -= victim.size;
      if (victim.stream != 0 && unit(rng) < o.record_stream_fraction) {
        model.recordStream(victim.handle, kRecordStreamUse);
        std::uniform_int_distribution<std::uint64_t> delay(1, 200);
        device.completeAt(victim.tag, request + delay(rng));
      }
      model.free(victim.handle);
    }
    ++request;
  }
  out.requests = request;
  out.final_stats = model.stats();
  if (!model.invariantFailure().empty()) return Status::error("synthetic workload: " + model.invariantFailure());

  recordFinalState(o.settings, *config, model, snap);
  return out;
}

}  // namespace reservoir::replay
