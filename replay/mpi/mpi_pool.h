// The CLI's work pool over the processes of an MPI job (see mpi_driver.h).
#pragma once

#include <mpi.h>

#include <vector>

#include "work_pool.h"

namespace reservoir::mpi {

class MpiPool : public cli::WorkPool {
 public:
  explicit MpiPool(MPI_Comm comm);
  [[nodiscard]] int processes() const override { return size_; }
  [[nodiscard]] int rank() const override { return rank_; }
  // Items are assigned by cli::assignItems (largest first, to the least loaded process); each
  // process runs its own one at a time and sends each result to rank 0 as soon as it is done.
  std::vector<std::string> run(const std::vector<std::uint64_t>& costs,
                               const std::function<std::string(std::size_t)>& work, unsigned threads,
                               std::ostream& err) override;
  [[nodiscard]] std::optional<nlohmann::json> mpiJson() const override;

 private:
  struct ProcessStats {
    std::uint64_t items = 0;
    double seconds = 0;
    double cpu_seconds = 0;
  };
  void gatherStats(const ProcessStats& mine);

  MPI_Comm comm_;
  int rank_ = 0;
  int size_ = 1;
  std::vector<ProcessStats> stats_;  // rank 0: per process, summed over runs
};

}  // namespace reservoir::mpi
