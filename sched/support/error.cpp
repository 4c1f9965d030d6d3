#include "sched/support/error.h"

#include <memory>
#include <mutex>
#include <set>

namespace tandem {

std::string SourceLoc::str() const {
  if (!file) return "";
  std::string s = file;
  if (line > 0) {
    s += ":" + std::to_string(line);
    if (col > 0) s += ":" + std::to_string(col);
  }
  return s;
}

const char* intern_file_name(const std::string& name) {
  static std::mutex mu;
  static std::set<std::string> names;  // node-based: element addresses are stable
  std::lock_guard<std::mutex> lock(mu);
  return names.insert(name).first->c_str();
}

static std::string compose(const SourceLoc& loc, const std::string& message) {
  return loc.valid() ? loc.str() + ": error: " + message : "error: " + message;
}

Error::Error(SourceLoc loc, const std::string& message)
    : std::runtime_error(compose(loc, message)), loc_(loc), message_(message) {}

std::string format_error(const Error& e) { return e.what(); }

}  // namespace tandem
