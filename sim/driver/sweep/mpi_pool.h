// Sweep points spread over MPI ranks (Open MPI): rank 0 hands out point numbers one at a time
// as ranks ask for work (slow points do not idle the others) and collects every result; the
// other ranks run each point in a forked child, as a local sweep does. Built when CMake finds
// MPI (TANDEM_HAVE_MPI).
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "sim/driver/isolated.h"

namespace tandem {

// Under mpirun with more than one rank (Open MPI's environment says so).
bool launched_under_mpi();

class MpiPool {
 public:
  MpiPool();   // MPI_Init
  ~MpiPool();  // MPI_Finalize
  MpiPool(const MpiPool&) = delete;
  MpiPool& operator=(const MpiPool&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }

  // Rank 0: runs `points` on the other ranks and calls done(point, outcome) as each returns,
  // then stops the other ranks.
  void coordinate(const std::vector<size_t>& points, const std::function<void(size_t, const IsolatedOutcome&)>& done);
  // Rank 0, for a search that decides its next points from the last ones: one batch, the
  // other ranks kept waiting for the next; stop() ends them (the destructor does too). With
  // `stop_requested` (polled while waiting), a batch it interrupts is abandoned: false, the
  // results still out are dropped, and the pool neither stops the ranks nor finalizes (under
  // mpirun, Ctrl-C reaches rank 0 as SIGTERM while mpirun ends the other ranks).
  bool run_batch(const std::vector<size_t>& points, const std::function<void(size_t, const IsolatedOutcome&)>& done,
                 const std::function<bool()>& stop_requested = {});
  void stop();
  // The other ranks: run job(point) for each point rank 0 sends, until it says stop; a point
  // still running after `timeout_s` seconds (0: no limit) is killed and reported timed out.
  void work(const std::function<std::string(size_t)>& job, double timeout_s);

 private:
  int rank_ = 0, size_ = 1;
  std::vector<int> idle_;  // rank 0: ranks waiting for a point
  bool stopped_ = false;
  bool abandoned_ = false;
};

}  // namespace tandem
