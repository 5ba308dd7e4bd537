#include "conformance/recorded_oracle.h"

#include "reservoir/replay/conformance.h"

namespace reservoir::replay::detail {

using traces::Action;

void RecordedOracle::failHere(std::string expected, std::string simulated) {
  if (failed) return;
  failed = true;
  fail_index = pos;
  fail_expected = std::move(expected);
  fail_simulated = std::move(simulated);
}

void RecordedOracle::onEvent(const sim::SimEvent& e) {
  if (failed) return;
  const traces::TraceEvent* r = next();
  if (!r) {
    failHere("(end of the recording)", describeEvent(e));
    last_failed_event = e;
    return;
  }
  if (r->action != e.action || r->addr != e.addr || r->size != e.size || snap_.stream(*r) != e.stream) {
    failHere(describeEvent(snap_, *r), describeEvent(e));
    last_failed_event = e;
    return;
  }
  ++pos;
  ++compared;
}

std::optional<Addr> RecordedOracle::cudaMalloc(ByteCount size, StreamId stream) {
  const auto* r = next();
  if (r && r->action == Action::kSegmentAlloc && r->size == size && snap_.stream(*r) == stream) return r->addr;
  return std::nullopt;  // the recording shows no segment here: this cudaMalloc failed
}

Addr RecordedOracle::reserveAddress(ByteCount size, ByteCount, StreamId) {
  // A new reservation is mapped from its start right away: its first segment_map names it.
  const auto* r = next();
  Addr a = 0;
  if (r && r->action == Action::kSegmentMap) {
    a = r->addr;
  } else {
    a = provisional_va_;
    provisional_va_ += size;
  }
  reservations.push_back(a);
  return a;
}

bool RecordedOracle::mapPages(Addr addr, ByteCount size, StreamId stream) {
  const auto* r = next();
  return r && r->action == Action::kSegmentMap && r->addr == addr && r->size == size && snap_.stream(*r) == stream;
}

ByteCount RecordedOracle::deviceFree() {
  const auto* r = next();
  return r && r->action == Action::kOom ? r->addr : 0;
}

void RecordedOracle::recordedCompletions(std::span<const sim::OutstandingEvent> outstanding,
                                         std::vector<std::size_t>& out, std::vector<bool>& taken) const {
  for (std::size_t k = pos; k < rec_.size() && rec_[k].action == Action::kFreeCompleted; ++k) {
    bool any = false;
    for (std::size_t i = 0; i < outstanding.size(); ++i) {
      if (!taken[i] && outstanding[i].block_addr == rec_[k].addr) {
        taken[i] = true;
        out.push_back(i);
        any = true;
      }
    }
    if (!any) break;
  }
}

void RecordedOracle::pollEvents(std::span<const sim::OutstandingEvent> outstanding,
                                std::vector<std::size_t>& completed) {
  std::vector<bool> taken(outstanding.size(), false);
  recordedCompletions(outstanding, completed, taken);
}

void RecordedOracle::syncOrder(std::span<const sim::OutstandingEvent> outstanding, std::vector<std::size_t>& order) {
  std::vector<bool> taken(outstanding.size(), false);
  recordedCompletions(outstanding, order, taken);
  for (std::size_t i = 0; i < outstanding.size(); ++i)
    if (!taken[i]) order.push_back(i);
}

}  // namespace reservoir::replay::detail
