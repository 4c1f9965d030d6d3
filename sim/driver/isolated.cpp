#include "sim/driver/isolated.h"

#include <poll.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <vector>
#include <stdexcept>

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
  const pid_t pid = ::fork();
  if (pid < 0) throw std::runtime_error("fork failed");
  if (pid == 0) {
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

std::string run_isolated(const std::function<std::string()>& job) {
  const Child child = spawn(job);
  std::string answer = read_all(child.fd);
  ::close(child.fd);
  int status = 0;
  ::waitpid(child.pid, &status, 0);
  return decode(std::move(answer), status);
}

void run_isolated_pool(size_t count, int parallel, const std::function<std::string(size_t)>& job,
                       const std::function<void(size_t, const IsolatedOutcome&)>& done) {
  struct Running {
    size_t index;
    Child child;
    std::string answer;
  };
  std::vector<Running> running;
  size_t next = 0;
  while (next < count || !running.empty()) {
    while (next < count && static_cast<int>(running.size()) < std::max(1, parallel)) {
      const size_t i = next++;
      running.push_back({i, spawn([&job, i] { return job(i); }), ""});
    }
    std::vector<pollfd> fds;
    for (const Running& r : running) fds.push_back({r.child.fd, POLLIN, 0});
    if (::poll(fds.data(), fds.size(), -1) < 0 && errno != EINTR) throw std::runtime_error("poll failed");
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
