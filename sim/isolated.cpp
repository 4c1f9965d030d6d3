#include "sim/isolated.h"

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
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

}  // namespace

std::string run_isolated(const std::function<std::string()>& job) {
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
  std::string answer = read_all(fd[0]);
  ::close(fd[0]);
  int status = 0;
  ::waitpid(pid, &status, 0);
  if (answer.empty()) throw std::runtime_error("simulation process died (status " + std::to_string(status) + ")");
  const char kind = answer[0];
  answer.erase(0, 1);
  if (kind == 'o') return answer;
  if (kind == 'x') throw std::runtime_error(answer);
  // Rebuild the child's Error with its location.
  size_t a = answer.find('\n'), b = answer.find('\n', a + 1), c = answer.find('\n', b + 1);
  const std::string file = answer.substr(0, a);
  SourceLoc loc{file.empty() ? nullptr : intern_file_name(file), std::stoi(answer.substr(a + 1, b - a - 1)),
                std::stoi(answer.substr(b + 1, c - b - 1))};
  throw Error(loc, answer.substr(c + 1));
}

}  // namespace tandem
