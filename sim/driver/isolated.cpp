#include "sim/driver/isolated.h"

#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <sstream>
#include <stdexcept>
#include <vector>

#include "sched/support/error.h"

namespace tandem {

namespace {

// The child's answer: a kind byte ('o' output, 'e' user error, 'x' internal error), then for
// errors "file\nline\ncol\nmessage", else the output.
bool write_all(int fd, const std::string& s) {
  size_t done = 0;
  while (done < s.size()) {
    ssize_t n = ::write(fd, s.data() + done, s.size() - done);
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

std::string read_all(int fd) {
  std::string s;
  char buf[65536];
  for (ssize_t n; (n = ::read(fd, buf, sizeof buf)) > 0;) s.append(buf, static_cast<size_t>(n));
  return s;
}

struct Child {
  pid_t pid;
  int fd;
};

Child spawn(const std::function<std::string()>& job) {
  int fd[2];
  if (::pipe(fd) != 0) throw std::runtime_error("pipe failed");
  std::fflush(nullptr);
  const pid_t parent = ::getpid();
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
    // Dies with the parent: an interrupted sweep (SIGTERM, SIGKILL) leaves no point running.
    // SIGTERM, so that the point removes its scratch files first (sched/support/output.h).
    ::prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (::getppid() != parent) _exit(1);
    ::close(fd[0]);
    std::string answer;
    try {
      answer = "o" + job();
    } catch (const Error& e) {
      const SourceLoc& l = e.loc();
      answer = "e" + std::string(l.file ? l.file : "") + "\n" + std::to_string(l.line) + "\n" + std::to_string(l.col) +
               "\n" + e.message();
    } catch (const std::exception& e) {
      answer = std::string("x") + e.what();
    }
    _exit(write_all(fd[1], answer) ? 0 : 2);
  }
  ::close(fd[1]);
  return {pid, fd[0]};
}

// The child's output; its user Error rethrown with its location, anything else as an internal error.
std::string decode(std::string answer, int status) {
  if (answer.empty()) throw std::runtime_error("simulation process died (status " + std::to_string(status) + ")");
  const char kind = answer[0];
  answer.erase(0, 1);
  if (kind == 'o') return answer;
  if (kind == 'x') throw std::runtime_error(answer);
  size_t a = answer.find('\n'), b = answer.find('\n', a + 1), c = answer.find('\n', b + 1);
  const std::string file = answer.substr(0, a);
  SourceLoc loc{file.empty() ? nullptr : intern_file_name(file), std::stoi(answer.substr(a + 1, b - a - 1)),
                std::stoi(answer.substr(b + 1, c - b - 1))};
  throw Error(loc, answer.substr(c + 1));
}

}  // namespace

IsolatedOutcome outcome_of(const std::function<std::string()>& produce) {
  IsolatedOutcome o;
  try {
    o.output = produce();
    o.ok = true;
  } catch (const Error& e) {
    o.error = e.what();
  } catch (const std::exception& e) {
    o.error = std::string("internal error: ") + e.what();
    o.internal = true;
  }
  return o;
}

IsolatedOutcome run_isolated_outcome(const std::function<std::string()>& job, double timeout_s) {
  IsolatedOutcome out;
  run_isolated_pool(
      1, 1, [&](size_t) { return job(); }, [&](size_t, const IsolatedOutcome& o) { out = o; }, timeout_s);
  return out;
}

std::string run_isolated(const std::function<std::string()>& job) {
  const Child child = spawn(job);
  std::string answer = read_all(child.fd);
  ::close(child.fd);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  return decode(std::move(answer), status);
}

void run_isolated_pool(size_t count, int parallel, const std::function<std::string(size_t)>& job,
                       const std::function<void(size_t, const IsolatedOutcome&)>& done, double timeout_s,
                       const std::function<bool()>& stop) {
  using Clock = std::chrono::steady_clock;
  struct Running {
    size_t index;
    Child child;
    std::string answer;
    Clock::time_point deadline;
  };
  const bool limited = timeout_s > 0;
  const auto limit =
      std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(limited ? timeout_s : 0));
  std::vector<Running> running;
  size_t next = 0;
  while (next < count || !running.empty()) {
    if (stop && stop()) {
      for (Running& r : running) {
        ::kill(r.child.pid, SIGKILL);
        ::close(r.child.fd);
        int status = 0;
        ::waitpid(r.child.pid, &status, 0);
      }
      return;
    }
    while (next < count && static_cast<int>(running.size()) < std::max(1, parallel)) {
      const size_t i = next++;
      running.push_back({i, spawn([&job, i] { return job(i); }), "", Clock::now() + limit});
    }
    // A child past its deadline is killed; its outcome says so.
    if (limited) {
      const Clock::time_point now = Clock::now();
      for (size_t k = running.size(); k-- > 0;) {
        if (running[k].deadline > now) continue;
        Running r = std::move(running[k]);
        running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
        ::kill(r.child.pid, SIGKILL);
        ::close(r.child.fd);
        int status = 0;
        ::waitpid(r.child.pid, &status, 0);
        IsolatedOutcome o;
        o.timed_out = true;
        std::ostringstream text;
        text << "timed out after " << timeout_s << " s";
        o.error = text.str();
        done(r.index, o);
      }
      if (running.empty()) continue;
    }
    int wait_ms = -1;
    if (limited) {
      Clock::time_point first = running[0].deadline;
      for (const Running& r : running) first = std::min(first, r.deadline);
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(first - Clock::now()).count();
      wait_ms = static_cast<int>(std::clamp<long long>(left + 1, 0, 60 * 1000));
    }
    std::vector<pollfd> fds;
    for (const Running& r : running) fds.push_back({r.child.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), wait_ms) < 0 && errno != EINTR) throw std::runtime_error("poll failed");
    for (size_t k = fds.size(); k-- > 0;) {
      if (!(fds[k].revents & (POLLIN | POLLHUP | POLLERR))) continue;
      Running& r = running[k];
      char buf[65536];
      const ssize_t n = ::read(r.child.fd, buf, sizeof buf);
      if (n > 0) {
        r.answer.append(buf, static_cast<size_t>(n));
        continue;
      }
      ::close(r.child.fd);
      int status = 0;
      ::waitpid(r.child.pid, &status, 0);
      const IsolatedOutcome outcome = outcome_of([&] { return decode(std::move(r.answer), status); });
      const size_t index = r.index;
      running.erase(running.begin() + static_cast<std::ptrdiff_t>(k));
      done(index, outcome);
    }
  }
}

}  // namespace tandem
