// The report's table (report.h): one row per variant and rank, the figures the Markdown prints
// and the JSON's "table" holds.
#include "report/report_internal.h"

namespace reservoir::replay {

std::vector<ReportRow> reportTable(const Report& report) {
  std::vector<ReportRow> rows;
  for (std::size_t v = 0; v < report.variants.size(); ++v)
    for (std::size_t r = 0; r < report.ranks.size(); ++r) {
      const ReportRun& run = report.ranks[r].runs[v];
      const ReportRun& recording = report.ranks[r].runs[0];
      ReportRow row;
      row.variant = v;
      row.rank = r;
      row.probes = run.probes;
      row.demands = run.demands;
      row.peak_allocated = run.run().peak_allocated.bytes;
      row.peak_reserved = run.run().peak_reserved.bytes;
      row.peak_allocated_change = row.peak_allocated - recording.run().peak_allocated.bytes;
      row.peak_reserved_change = row.peak_reserved - recording.run().peak_reserved.bytes;
      for (std::size_t i = 0; i < run.probes.size(); ++i) {
        const bool both =
            run.probes[i].occurrences > 0 && i < recording.probes.size() && recording.probes[i].occurrences > 0;
        row.probe_change.push_back(
            both ? std::optional<std::int64_t>(run.probes[i].reserved - recording.probes[i].reserved) : std::nullopt);
      }
      row.worst = report.ranks.size() > 1 && report.variants[v].worst_rank == r;
      if (run.run().oom) row.oom_event = run.run().oom->event;
      rows.push_back(std::move(row));
    }
  return rows;
}

}  // namespace reservoir::replay
