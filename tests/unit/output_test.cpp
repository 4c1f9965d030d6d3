#include <catch2/catch.hpp>

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "sched/support/error.h"
#include "sched/support/output.h"

using namespace tandem;

namespace {

struct TempDir {
  std::string path;
  TempDir() {
    char tmpl[] = "/tmp/tandem_output_test.XXXXXX";
    path = ::mkdtemp(tmpl);
  }
  ~TempDir() { (void)std::system(("rm -rf '" + path + "'").c_str()); }
  std::string operator/(const std::string& name) const { return path + "/" + name; }
};

std::string slurp(const std::string& path) {
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

bool exists(const std::string& path) {
  struct stat st {};
  return ::lstat(path.c_str(), &st) == 0;
}

std::string temporary_of(const std::string& path) { return path + ".tmp." + std::to_string(::getpid()); }

}  // namespace

TEST_CASE("printable escapes control characters and cuts long text", "[output]") {
  CHECK(printable("plain") == "plain");
  CHECK(printable(std::string("a\x01") + "\n\t\x7f\xc3") == "a\\x01\\n\\t\\x7f\\xc3");
  CHECK(printable(std::string(50, 'x')) == std::string(40, 'x') + "...");
  CHECK(printable(std::string(40, 'x')) == std::string(40, 'x'));
  CHECK(printable("abcdef", 3) == "abc...");
}

TEST_CASE("an output file appears only when committed, and keeps the replaced file's mode", "[output]") {
  TempDir d;
  const std::string out = d / "out.txt";
  {
    OutputFile f(out);
    f.write("half");
    CHECK(exists(temporary_of(out)));
    CHECK(!exists(out));
  }  // abandoned
  CHECK(!exists(temporary_of(out)));
  CHECK(!exists(out));

  write_file_atomic(out, "first\n");
  CHECK(slurp(out) == "first\n");
  REQUIRE(::chmod(out.c_str(), 0640) == 0);
  write_file_atomic(out, "second\n");
  CHECK(slurp(out) == "second\n");
  struct stat st {};
  REQUIRE(::stat(out.c_str(), &st) == 0);
  CHECK((st.st_mode & 07777) == 0640);
  CHECK(!exists(temporary_of(out)));
}

TEST_CASE("an output through a symbolic link writes the file it names and keeps the link", "[output]") {
  TempDir d;
  REQUIRE(::symlink("target.txt", (d / "link.txt").c_str()) == 0);
  write_file_atomic(d / "link.txt", "new\n");  // the target does not exist yet
  struct stat st {};
  REQUIRE(::lstat((d / "link.txt").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(slurp(d / "target.txt") == "new\n");
  write_file_atomic(d / "link.txt", "again\n");  // now it does
  REQUIRE(::lstat((d / "link.txt").c_str(), &st) == 0);
  CHECK(S_ISLNK(st.st_mode));
  CHECK(slurp(d / "target.txt") == "again\n");
}

TEST_CASE("an output refuses a directory and leaves nothing beside it", "[output]") {
  TempDir d;
  REQUIRE(::mkdir((d / "dir").c_str(), 0755) == 0);
  try {
    write_file_atomic(d / "dir", "x");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.message() ==
          "cannot write output file: it is a directory (outputs go to regular files, character devices or FIFOs)");
  }
  CHECK(!exists(temporary_of(d / "dir")));
  try {
    write_file_atomic(d / "missing/out.txt", "x");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.message() == "cannot write output file: No such file or directory");
  }
}

TEST_CASE("an input file that is a directory is an error", "[output]") {
  TempDir d;
  try {
    (void)read_input_file(d.path, "kernel file");
    FAIL("no error");
  } catch (const Error& e) {
    CHECK(e.message() == "cannot read kernel file: it is a directory");
  }
  write_file_atomic(d / "k.kir", "text");
  CHECK(read_input_file(d / "k.kir") == "text");
}
