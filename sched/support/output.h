// Output files (-o, --trace, --report, the sweep CSV's final rewrite): one implementation,
// so that a reader never sees half a file and no command replaces what is not a regular file.
//
//  - A regular file, or a path that does not exist yet: written to PATH.tmp.PID beside it and
//    renamed over it only when complete. A replaced file keeps its permission bits.
//  - A symbolic link: followed to the file it names (even one that does not exist yet), which
//    is written as above; the link stays a link.
//  - A character device or a FIFO (/dev/null, /dev/stdout, a named pipe): written through in
//    place, never replaced. Nothing is atomic there: a run that fails midway may have written
//    part of a streamed output (the trace) to it.
//  - /dev/stdout, /dev/stderr, /dev/fd/N, /proc/self/fd/N: written to that descriptor of the
//    process as the shell set it up (a `>> log` redirection still appends).
//  - A directory, a block device or a socket: refused with an Error naming the path.
//
// The temporary is removed on every error, when an OutputFile is destroyed without commit(),
// at exit, and when the process is killed by SIGINT, SIGTERM, SIGHUP or SIGPIPE (a handler
// that unlinks the registered temporaries, then lets the signal take its usual effect).
#pragma once

#include <cstdio>
#include <string>

namespace tandem {

class OutputFile {
 public:
  // Opens the output; throws Error (located at `path`) when it cannot be written. Opening a
  // FIFO waits for a reader, as a shell redirection does.
  explicit OutputFile(const std::string& path);
  ~OutputFile();  // abandons the output (removes the temporary) unless commit() ran
  OutputFile(const OutputFile&) = delete;
  OutputFile& operator=(const OutputFile&) = delete;

  std::FILE* stream() { return out_; }
  void write(const std::string& text);
  // Flushes and closes the output and moves a temporary into place; throws Error on failure
  // (the temporary is removed, the target left as it was).
  void commit();

  const std::string& path() const { return path_; }
  bool writes_through() const { return tmp_.empty(); }

 private:
  void write_through(int fd);  // a descriptor opened on the target itself (device, FIFO, our own stdout)
  [[noreturn]] void fail(const std::string& what, int err);
  void abandon();

  std::string path_;    // as the user wrote it, for messages
  std::string target_;  // where a temporary is renamed to (symlinks followed)
  std::string tmp_;     // the temporary; empty when writing through
  std::FILE* out_ = nullptr;
  int slot_ = -1;        // the temporary's entry in the signal-cleanup registry
  int write_error_ = 0;  // errno of the first failed write, reported by commit()
};

// One CSV cell: as it is, or quoted (quotes doubled, newlines as spaces) when it holds a
// comma, a quote or a newline.
std::string csv_cell(const std::string& s);

// Names the process in the one line that SIGINT, SIGTERM and SIGHUP print on stderr when they
// end it ("NAME: stopped by SIGTERM", after its temporaries are removed); the signal then ends
// the process, so a shell sees the status 128 + the signal. A forked child prints no line, and a
// signal the process was started with ignored (nohup) stays ignored.
void name_stop_line(const std::string& name);

// `name` in $TMPDIR (else /tmp).
std::string temporary_path(const std::string& name);

// A file written for the time of a scope: removed when destroyed and on those signals.
class ScratchFile {
 public:
  ScratchFile(const std::string& path, const std::string& content);
  ~ScratchFile();
  ScratchFile(const ScratchFile&) = delete;
  ScratchFile& operator=(const ScratchFile&) = delete;
  const std::string& path() const { return path_; }

 private:
  std::string path_;
  int slot_ = -1;
};

// Writes `content` to `path` through an OutputFile; throws Error when it cannot.
void write_file_atomic(const std::string& path, const std::string& content);

// Reads a whole input file; throws Error (located at `path`, naming it as `what`) when it
// cannot be read or is a directory. Character devices, FIFOs and process substitutions
// (`<(...)`) are read like files.
std::string read_input_file(const std::string& path, const std::string& what = "file");

}  // namespace tandem
