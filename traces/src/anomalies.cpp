#include "reservoir/traces/anomalies.h"

namespace reservoir::traces {
namespace {

constexpr AnomalyInfo kInfo[] = {
#define RESERVOIR_ANOMALY_INFO(name, severity, description) {#name, Severity::severity, description},
    RESERVOIR_ANOMALIES(RESERVOIR_ANOMALY_INFO)
#undef RESERVOIR_ANOMALY_INFO
};

}  // namespace

const AnomalyInfo& anomalyInfo(Anomaly anomaly) { return kInfo[static_cast<std::size_t>(anomaly)]; }

std::string_view severityName(Severity severity) {
  switch (severity) {
    case Severity::kInfo: return "info";
    case Severity::kDataLoss: return "data-loss";
    case Severity::kError: return "error";
  }
  return "?";
}

void AnomalyCounters::add(Anomaly anomaly, std::string_view example, std::uint64_t count) {
  counts_[index(anomaly)] += count;
  auto& ex = examples_[index(anomaly)];
  if (!example.empty() && ex.size() < kMaxExamples) {
    for (const auto& e : ex)
      if (e == example) return;
    ex.emplace_back(example);
  }
}

std::uint64_t AnomalyCounters::total() const {
  std::uint64_t t = 0;
  for (auto c : counts_) t += c;
  return t;
}

std::uint64_t AnomalyCounters::total(Severity at_least) const {
  std::uint64_t t = 0;
  for (std::size_t i = 0; i < kCount; ++i)
    if (kInfo[i].severity >= at_least) t += counts_[i];
  return t;
}

void AnomalyCounters::merge(const AnomalyCounters& other) {
  for (std::size_t i = 0; i < kCount; ++i) {
    counts_[i] += other.counts_[i];
    for (const auto& e : other.examples_[i])
      if (examples_[i].size() < kMaxExamples) examples_[i].push_back(e);
  }
}

}  // namespace reservoir::traces
