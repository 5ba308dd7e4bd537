#include "mpi_pool.h"

#include <fmt/format.h>

#include <cstring>
#include <ctime>
#include <deque>
#include <ostream>

namespace reservoir::mpi {
namespace {

constexpr int kResultTag = 18;

double cpuSeconds() {
  timespec ts{};
  ::clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + 1e-9 * static_cast<double>(ts.tv_nsec);
}

// A result on the wire: the item's index (8 bytes) then its bytes.
std::string frame(std::size_t item, const std::string& result) {
  std::string msg(sizeof(std::uint64_t), '\0');
  const auto index = static_cast<std::uint64_t>(item);
  std::memcpy(msg.data(), &index, sizeof index);
  return msg + result;
}

class Gatherer {
 public:
  Gatherer(MPI_Comm comm, std::vector<std::string>& results, std::ostream& err, int processes)
      : comm_(comm), results_(results), err_(err), processes_(processes) {}

  void done(std::size_t item, std::string result) {
    results_[item] = std::move(result);
    ++done_;
    report();
  }
  // Takes every result that has arrived; with `wait`, until all have.
  void receive(bool wait) {
    while (done_ < results_.size()) {
      MPI_Status st;
      int flag = 1;
      if (wait)
        MPI_Probe(MPI_ANY_SOURCE, kResultTag, comm_, &st);
      else
        MPI_Iprobe(MPI_ANY_SOURCE, kResultTag, comm_, &flag, &st);
      if (!flag) return;
      int count = 0;
      MPI_Get_count(&st, MPI_CHAR, &count);
      std::string msg(static_cast<std::size_t>(count), '\0');
      MPI_Recv(msg.data(), count, MPI_CHAR, st.MPI_SOURCE, kResultTag, comm_, MPI_STATUS_IGNORE);
      std::uint64_t index = 0;
      std::memcpy(&index, msg.data(), sizeof index);
      done(static_cast<std::size_t>(index), msg.substr(sizeof index));
    }
  }

 private:
  // "reservoir: 12/40 items done (3 processes)" on stderr, at most about 20 times a run.
  void report() {
    const std::size_t total = results_.size();
    const std::size_t step = done_ * 20 / total;
    if (done_ != total && step == last_step_) return;
    last_step_ = step;
    err_ << fmt::format("reservoir: {}/{} items done ({} processes)\n", done_, total, processes_) << std::flush;
  }

  MPI_Comm comm_;
  std::vector<std::string>& results_;
  std::ostream& err_;
  int processes_;
  std::size_t done_ = 0;
  std::size_t last_step_ = 0;
};

}  // namespace

MpiPool::MpiPool(MPI_Comm comm) : comm_(comm) {
  MPI_Comm_rank(comm_, &rank_);
  MPI_Comm_size(comm_, &size_);
}

std::vector<std::string> MpiPool::run(const std::vector<std::uint64_t>& costs,
                                      const std::function<std::string(std::size_t)>& work, unsigned /*threads*/,
                                      std::ostream& err) {
  const double t0 = MPI_Wtime(), cpu0 = cpuSeconds();
  const std::vector<std::size_t> mine = cli::itemsOf(cli::assignItems(costs, size_), costs, rank_);
  std::vector<std::string> results(rank_ == 0 ? costs.size() : 0);
  Gatherer gather(comm_, results, err, size_);
  std::deque<std::string> sent;  // kept alive (and in place) until their sends complete
  std::vector<MPI_Request> requests;
  for (std::size_t i : mine) {
    std::string r = cli::runItem(work, i);
    if (rank_ == 0) {
      gather.done(i, std::move(r));
      gather.receive(false);
      continue;
    }
    sent.push_back(frame(i, r));
    requests.emplace_back();
    MPI_Isend(sent.back().data(), static_cast<int>(sent.back().size()), MPI_CHAR, 0, kResultTag, comm_,
              &requests.back());
  }
  const ProcessStats stats{mine.size(), MPI_Wtime() - t0, cpuSeconds() - cpu0};
  if (rank_ == 0 && !costs.empty()) gather.receive(true);
  if (!requests.empty()) MPI_Waitall(static_cast<int>(requests.size()), requests.data(), MPI_STATUSES_IGNORE);
  gatherStats(stats);
  return results;
}

void MpiPool::gatherStats(const ProcessStats& s) {
  const double mine[3] = {static_cast<double>(s.items), s.seconds, s.cpu_seconds};
  std::vector<double> all(rank_ == 0 ? 3 * static_cast<std::size_t>(size_) : 0);
  MPI_Gather(mine, 3, MPI_DOUBLE, all.data(), 3, MPI_DOUBLE, 0, comm_);
  if (rank_ != 0) return;
  stats_.resize(static_cast<std::size_t>(size_));
  for (std::size_t p = 0; p < stats_.size(); ++p) {
    stats_[p].items += static_cast<std::uint64_t>(all[3 * p]);
    stats_[p].seconds += all[3 * p + 1];
    stats_[p].cpu_seconds += all[3 * p + 2];
  }
}

std::optional<nlohmann::json> MpiPool::mpiJson() const {
  nlohmann::json per = nlohmann::json::array();
  for (int p = 0; p < size_; ++p) {
    const ProcessStats s =
        static_cast<std::size_t>(p) < stats_.size() ? stats_[static_cast<std::size_t>(p)] : ProcessStats{};
    per.push_back({{"items", s.items}, {"seconds", s.seconds}, {"cpu_seconds", s.cpu_seconds}});
  }
  return nlohmann::json{{"processes", size_}, {"per_process", per}};
}

}  // namespace reservoir::mpi
