#include "sim/driver/sweep/mpi_pool.h"

#include <mpi.h>
#include <unistd.h>

#include <cstdlib>
#include <stdexcept>

namespace tandem {

namespace {

constexpr int kResultTag = 1;  // worker -> 0: "" (ready) or a result; 0 -> worker never uses it
constexpr int kPointTag = 2;   // 0 -> worker: a point number, or -1 to stop

// The next message any worker sends to rank 0 (a request or a result), and its rank. With
// `stop_requested`, it polls and gives up (false) as soon as that says so.
bool receive_from_worker(int* source, std::string* message, const std::function<bool()>& stop_requested = {}) {
  MPI_Status status;
  if (stop_requested) {
    for (int ready = 0;;) {
      MPI_Iprobe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &ready, &status);
      if (ready) break;
      if (stop_requested()) return false;
      ::usleep(1000);
    }
  } else {
    MPI_Probe(MPI_ANY_SOURCE, kResultTag, MPI_COMM_WORLD, &status);
  }
  int length = 0;
  MPI_Get_count(&status, MPI_CHAR, &length);
  message->assign(static_cast<size_t>(length), '\0');
  MPI_Recv(message->data(), length, MPI_CHAR, status.MPI_SOURCE, kResultTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
  *source = status.MPI_SOURCE;
  return true;
}

// A result on the wire: 'o' output, 'e' user error, 'x' internal error, 't' timed out; then
// the point number, a newline and the text.
std::string encode(size_t point, const IsolatedOutcome& o) {
  const char kind = o.ok ? 'o' : o.timed_out ? 't' : (o.internal ? 'x' : 'e');
  return std::string(1, kind) + std::to_string(point) + "\n" + (o.ok ? o.output : o.error);
}

IsolatedOutcome decode(const std::string& s, size_t* point) {
  const size_t nl = s.find('\n');
  *point = static_cast<size_t>(std::stoull(s.substr(1, nl - 1)));
  IsolatedOutcome o;
  o.ok = s[0] == 'o';
  o.internal = s[0] == 'x';
  o.timed_out = s[0] == 't';
  (o.ok ? o.output : o.error) = s.substr(nl + 1);
  return o;
}

}  // namespace

bool launched_under_mpi() {
  const char* size = std::getenv("OMPI_COMM_WORLD_SIZE");
  return size && std::atoi(size) > 1;
}

MpiPool::MpiPool() {
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

MpiPool::~MpiPool() {
  // An abandoned batch: mpirun is ending the job and has signalled the other ranks, so
  // stopping them or finalizing (which waits for every rank) would only wait for its SIGKILL.
  if (abandoned_) return;
  if (rank_ == 0 && size_ > 1) stop();
  MPI_Finalize();
}

void MpiPool::coordinate(const std::vector<size_t>& points,
                         const std::function<void(size_t, const IsolatedOutcome&)>& done) {
  run_batch(points, done);
  stop();
}

bool MpiPool::run_batch(const std::vector<size_t>& points,
                        const std::function<void(size_t, const IsolatedOutcome&)>& done,
                        const std::function<bool()>& stop_requested) {
  size_t next = 0, received = 0;
  auto send = [](long long point, int rank) { MPI_Send(&point, 1, MPI_LONG_LONG, rank, kPointTag, MPI_COMM_WORLD); };
  while (next < points.size() && !idle_.empty()) {
    send(static_cast<long long>(points[next++]), idle_.back());
    idle_.pop_back();
  }
  // A rank's message is its first request ("") or a result; either way it is ready for work.
  while (received < points.size()) {
    int source = 0;
    std::string message;
    if (!receive_from_worker(&source, &message, stop_requested)) {
      abandoned_ = true;
      return false;
    }
    if (!message.empty()) {
      size_t point = 0;
      const IsolatedOutcome o = decode(message, &point);
      done(point, o);
      ++received;
    }
    if (next < points.size())
      send(static_cast<long long>(points[next++]), source);
    else
      idle_.push_back(source);
  }
  return true;
}

void MpiPool::stop() {
  if (stopped_) return;
  stopped_ = true;
  const long long stop = -1;
  for (int rank : idle_) MPI_Send(&stop, 1, MPI_LONG_LONG, rank, kPointTag, MPI_COMM_WORLD);
  // The ranks not heard from yet are all waiting to send their first request.
  for (size_t left = static_cast<size_t>(size_ - 1) - idle_.size(); left > 0; --left) {
    int source = 0;
    std::string message;
    receive_from_worker(&source, &message);
    if (!message.empty()) throw std::logic_error("MPI pool: a result arrived after its batch");
    MPI_Send(&stop, 1, MPI_LONG_LONG, source, kPointTag, MPI_COMM_WORLD);
  }
  idle_.clear();
}

void MpiPool::work(const std::function<std::string(size_t)>& job, double timeout_s) {
  std::string message;  // the first request carries no result
  for (;;) {
    MPI_Send(message.data(), static_cast<int>(message.size()), MPI_CHAR, 0, kResultTag, MPI_COMM_WORLD);
    long long point = -1;
    MPI_Recv(&point, 1, MPI_LONG_LONG, 0, kPointTag, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    if (point < 0) return;
    message = encode(static_cast<size_t>(point),
                     run_isolated_outcome([&] { return job(static_cast<size_t>(point)); }, timeout_s));
  }
}

}  // namespace tandem
