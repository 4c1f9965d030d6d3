#include "sched/support/output.h"

#include <cstdio>
#include <fstream>

#include <unistd.h>

#include "sched/support/error.h"

namespace tandem {

void write_file_atomic(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp." + std::to_string(::getpid());
  {
    std::ofstream out(tmp, std::ios::binary | std::ios::trunc);
    if (!out) throw Error(SourceLoc{intern_file_name(path), 0, 0}, "cannot write output file");
    out << content;
    out.flush();
    if (!out) {
      std::remove(tmp.c_str());
      throw Error(SourceLoc{intern_file_name(path), 0, 0}, "failed while writing output file");
    }
  }
  if (std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::remove(tmp.c_str());
    throw Error(SourceLoc{intern_file_name(path), 0, 0}, "cannot move the finished output into place");
  }
}

}  // namespace tandem
