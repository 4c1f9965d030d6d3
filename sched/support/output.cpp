#include "sched/support/output.h"

#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "sched/support/error.h"

namespace tandem {

namespace {

// ---- the registry of temporaries, and the signal handler that removes them ----
//
// A fixed table, so that the handler touches nothing but atomics, bytes and unlink() (all
// async-signal-safe). A slot belongs to the process that filled it: a forked child that gets a
// signal never removes its parent's temporaries.

constexpr int kSlots = 64;
constexpr int kCaught[] = {SIGINT, SIGTERM, SIGHUP, SIGPIPE};

struct Slot {
  std::atomic<int> state{0};  // 0 free, 1 being filled or emptied, 2 holds a temporary
  pid_t owner = 0;
  char path[PATH_MAX] = {};
};

Slot g_slots[kSlots];
struct sigaction g_previous[sizeof kCaught / sizeof kCaught[0]];

// The stop line: its speaker (empty: no line), the process that speaks (not a forked child)
// and whether it first clears a progress line on a terminal.
char g_stop_name[64] = {};
pid_t g_stop_pid = 0;
bool g_stop_clears = false;

// "NAME: stopped by SIGTERM" on stderr, with only async-signal-safe calls.
void print_stop_line(int sig) {
  if (!g_stop_name[0] || ::getpid() != g_stop_pid) return;
  const char* what = sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : sig == SIGHUP ? "SIGHUP" : nullptr;
  if (!what) return;
  char line[128];
  size_t n = 0;
  auto put = [&](const char* s) {
    for (; *s && n < sizeof line - 1; ++s) line[n++] = *s;
  };
  if (g_stop_clears) put("\r\033[K");
  put(g_stop_name);
  put(": stopped by ");
  put(what);
  put("\n");
  (void)!::write(STDERR_FILENO, line, n);
}

void unlink_registered() {
  const pid_t self = ::getpid();
  for (Slot& s : g_slots)
    if (s.state.load(std::memory_order_acquire) == 2 && s.owner == self) ::unlink(s.path);
}

extern "C" void on_fatal_signal(int sig, siginfo_t* info, void* context) {
  const int saved_errno = errno;
  unlink_registered();
  for (size_t i = 0; i < sizeof kCaught / sizeof kCaught[0]; ++i) {
    if (kCaught[i] != sig) continue;
    const struct sigaction& prev = g_previous[i];
    if (prev.sa_flags & SA_SIGINFO) {
      if (prev.sa_sigaction) prev.sa_sigaction(sig, info, context);
    } else if (prev.sa_handler != SIG_DFL && prev.sa_handler != SIG_IGN) {
      prev.sa_handler(sig);
    } else {
      // The signal's usual effect: with the default action back, the re-raised signal is
      // delivered (and ends the process) as soon as this handler returns.
      print_stop_line(sig);
      struct sigaction dfl {};
      dfl.sa_handler = SIG_DFL;
      sigemptyset(&dfl.sa_mask);
      ::sigaction(sig, &dfl, nullptr);
      ::raise(sig);
    }
  }
  errno = saved_errno;
}

void install_handlers() {
  static std::once_flag once;
  std::call_once(once, [] {
    for (size_t i = 0; i < sizeof kCaught / sizeof kCaught[0]; ++i) {
      if (::sigaction(kCaught[i], nullptr, &g_previous[i]) != 0) continue;
      // A signal the user (nohup, a shell) set to be ignored stays ignored.
      if (!(g_previous[i].sa_flags & SA_SIGINFO) && g_previous[i].sa_handler == SIG_IGN) continue;
      struct sigaction sa {};
      sa.sa_sigaction = on_fatal_signal;
      sa.sa_flags = SA_SIGINFO | SA_RESTART;
      sigemptyset(&sa.sa_mask);
      for (int s : kCaught) sigaddset(&sa.sa_mask, s);
      ::sigaction(kCaught[i], &sa, nullptr);
    }
    std::atexit(unlink_registered);
  });
}

// Returns the slot, or -1 when the table is full (the temporary is then still removed on
// every error and by the destructor, only not on a signal).
int register_temporary(const std::string& path) {
  install_handlers();
  if (path.size() >= PATH_MAX) return -1;
  for (int i = 0; i < kSlots; ++i) {
    int expected = 0;
    if (!g_slots[i].state.compare_exchange_strong(expected, 1, std::memory_order_acq_rel)) continue;
    g_slots[i].owner = ::getpid();
    std::memcpy(g_slots[i].path, path.c_str(), path.size() + 1);
    g_slots[i].state.store(2, std::memory_order_release);
    return i;
  }
  return -1;
}

void unregister_temporary(int slot) {
  if (slot < 0) return;
  g_slots[slot].state.store(1, std::memory_order_release);
  g_slots[slot].path[0] = '\0';
  g_slots[slot].state.store(0, std::memory_order_release);
}

}  // namespace

void name_stop_line(const std::string& name) {
  install_handlers();
  const size_t n = std::min(name.size(), sizeof g_stop_name - 1);
  g_stop_name[0] = '\0';  // no line while the name changes: its first byte goes in last
  if (n > 1) std::memcpy(g_stop_name + 1, name.data() + 1, n - 1);
  g_stop_name[n] = '\0';
  g_stop_pid = ::getpid();
  g_stop_clears = ::isatty(STDERR_FILENO);
  if (n > 0) g_stop_name[0] = name[0];
}

std::string temporary_path(const std::string& name) {
  const char* tmpdir = std::getenv("TMPDIR");
  return std::string(tmpdir && *tmpdir ? tmpdir : "/tmp") + "/" + name;
}

ScratchFile::ScratchFile(const std::string& path, const std::string& content) : path_(path) {
  slot_ = register_temporary(path_);
  write_file_atomic(path_, content);
}

ScratchFile::~ScratchFile() {
  unregister_temporary(slot_);
  ::unlink(path_.c_str());
}

namespace {

// ---- paths ----

std::string dir_of(const std::string& path) {
  const size_t slash = path.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : path.substr(0, slash);
}

const char* kind_of(mode_t mode) {
  if (S_ISDIR(mode)) return "a directory";
  if (S_ISBLK(mode)) return "a block device";
  if (S_ISSOCK(mode)) return "a socket";
  if (S_ISCHR(mode)) return "a character device";
  if (S_ISFIFO(mode)) return "a FIFO";
  return "not a regular file";
}

// Follows a chain of symbolic links that ends at nothing (a link to a file not created yet);
// returns the path the file is to be created at.
std::string follow_dangling_links(const std::string& path, const SourceLoc& loc) {
  std::string p = path;
  for (int hops = 0; hops < 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0 || !S_ISLNK(st.st_mode)) return p;
    std::string target(PATH_MAX, '\0');
    const ssize_t n = ::readlink(p.c_str(), target.data(), target.size());
    if (n < 0 || static_cast<size_t>(n) >= target.size())
      throw Error(loc, "cannot write output file: cannot read the symbolic link " + p);
    target.resize(static_cast<size_t>(n));
    p = !target.empty() && target[0] == '/' ? target : dir_of(p) + "/" + target;
  }
  throw Error(loc, "cannot write output file: too many levels of symbolic links");
}

// The descriptor of this process that `path` names (/dev/stdout, /dev/fd/3, /proc/self/fd/1),
// or -1. Writing to a duplicate of it keeps the shell's redirection as it is (`>> log` still
// appends); replacing the file it leads to would not.
int own_descriptor(const std::string& path) {
  if (path == "/dev/stdout") return 1;
  if (path == "/dev/stderr") return 2;
  for (const char* prefix : {"/dev/fd/", "/proc/self/fd/"}) {
    const std::string p = prefix;
    if (path.compare(0, p.size(), p) != 0 || path.size() == p.size() || path.size() - p.size() > 6) continue;
    const std::string digits = path.substr(p.size());
    if (digits.find_first_not_of("0123456789") == std::string::npos) return std::atoi(digits.c_str());
  }
  return -1;
}

}  // namespace

OutputFile::OutputFile(const std::string& path) : path_(path) {
  const SourceLoc loc{intern_file_name(path), 0, 0};
  if (path.empty()) throw Error("an output file name is empty");
  if (const int own = own_descriptor(path); own >= 0) {
    write_through(::fcntl(own, F_DUPFD_CLOEXEC, 3));
    return;
  }
  struct stat st {};
  bool exists = ::stat(path.c_str(), &st) == 0;  // follows links
  if (!exists && errno != ENOENT) fail("cannot write output file", errno);
  if (exists && !S_ISREG(st.st_mode)) {
    if (!S_ISCHR(st.st_mode) && !S_ISFIFO(st.st_mode))
      throw Error(loc, std::string("cannot write output file: it is ") + kind_of(st.st_mode) +
                           " (outputs go to regular files, character devices or FIFOs)");
    // Written through: never renamed over, never truncated by a temporary.
    write_through(::open(path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY));
    return;
  }
  if (exists) {
    char real[PATH_MAX];
    if (!::realpath(path.c_str(), real)) fail("cannot write output file", errno);
    target_ = real;
  } else {
    target_ = follow_dangling_links(path, loc);
  }
  const std::string base = target_ + ".tmp." + std::to_string(::getpid());
  // A signal between creating the temporary and registering it would leave the file behind
  // (lit's output/interrupted.test signals as soon as it appears): the caught signals wait.
  install_handlers();
  sigset_t caught, previous;
  sigemptyset(&caught);
  for (int s : kCaught) sigaddset(&caught, s);
  ::pthread_sigmask(SIG_BLOCK, &caught, &previous);
  int fd = -1;
  for (int n = 0; fd < 0 && n < 100; ++n) {
    tmp_ = n == 0 ? base : base + "." + std::to_string(n);
    fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOCTTY, 0666);
    if (fd < 0 && errno != EEXIST) break;
  }
  const int err = errno;
  if (fd >= 0) slot_ = register_temporary(tmp_);
  ::pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  if (fd < 0) {
    tmp_.clear();
    fail("cannot write output file", err);
  }
  if (exists) (void)::fchmod(fd, st.st_mode & 07777);  // a replaced file keeps its mode
  out_ = ::fdopen(fd, "w");
  if (!out_) {
    const int err = errno;
    ::close(fd);
    abandon();
    fail("cannot write output file", err);
  }
}

OutputFile::~OutputFile() { abandon(); }

void OutputFile::write_through(int fd) {
  if (fd < 0) fail("cannot write output file", errno);
  out_ = ::fdopen(fd, "w");
  if (!out_) {
    const int err = errno;
    ::close(fd);
    fail("cannot write output file", err);
  }
}

void OutputFile::abandon() {
  if (out_) {
    std::fclose(out_);
    out_ = nullptr;
  }
  if (!tmp_.empty()) {
    ::unlink(tmp_.c_str());
    tmp_.clear();
  }
  unregister_temporary(slot_);
  slot_ = -1;
}

void OutputFile::fail(const std::string& what, int err) {
  throw Error(SourceLoc{intern_file_name(path_), 0, 0}, what + ": " + std::strerror(err));
}

void OutputFile::write(const std::string& text) {
  if (out_ && std::fwrite(text.data(), 1, text.size(), out_) != text.size() && !write_error_)
    write_error_ = errno ? errno : EIO;
}

void OutputFile::commit() {
  if (!out_) throw Error(SourceLoc{intern_file_name(path_), 0, 0}, "output file already finished");
  const bool through = tmp_.empty();
  int err = write_error_;
  errno = 0;
  if (std::fflush(out_) != 0 && !err) err = errno ? errno : EIO;
  if (std::ferror(out_) && !err) err = EIO;
  if (std::fclose(out_) != 0 && !err) err = errno ? errno : EIO;
  out_ = nullptr;
  if (err) {
    abandon();
    fail(through ? "failed while writing output file" : "failed while writing output file (left unchanged)", err);
  }
  if (through) return;
  // The target may have changed since it was opened: never rename over anything but a
  // regular file (or nothing).
  struct stat st {};
  if (::lstat(target_.c_str(), &st) == 0 && !S_ISREG(st.st_mode)) {
    abandon();
    throw Error(SourceLoc{intern_file_name(path_), 0, 0},
                std::string("cannot write output file: it became ") + kind_of(st.st_mode) + " while being written");
  }
  if (::rename(tmp_.c_str(), target_.c_str()) != 0) {
    err = errno;
    abandon();
    fail("cannot move the finished output into place", err);
  }
  tmp_.clear();
  unregister_temporary(slot_);
  slot_ = -1;
}

void write_file_atomic(const std::string& path, const std::string& content) {
  OutputFile out(path);
  out.write(content);
  out.commit();
}

std::string csv_cell(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string q = "\"";
  for (char c : s) q += c == '"' ? std::string("\"\"") : std::string(1, c == '\n' ? ' ' : c);
  return q + "\"";
}

std::string read_input_file(const std::string& path, const std::string& what) {
  const SourceLoc loc{intern_file_name(path), 0, 0};
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY);
  if (fd < 0) throw Error(loc, "cannot open " + what + ": " + std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) == 0 && S_ISDIR(st.st_mode)) {
    ::close(fd);
    throw Error(loc, "cannot read " + what + ": it is a directory");
  }
  std::string text;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(fd, buf, sizeof buf);
    if (n == 0) break;
    if (n < 0) {
      if (errno == EINTR) continue;
      const int err = errno;
      ::close(fd);
      throw Error(loc, "cannot read " + what + ": " + std::strerror(err));
    }
    text.append(buf, static_cast<size_t>(n));
  }
  ::close(fd);
  return text;
}

}  // namespace tandem
