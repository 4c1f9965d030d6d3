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

// The line an Error prints: its control characters escaped (printable, uncut) whatever the
// message echoes, so that it stays one line; the message itself is kept as given.
static std::string compose(const SourceLoc& loc, const std::string& message) {
  return printable(loc.valid() ? loc.str() + ": error: " + message : "error: " + message, std::string::npos);
}

Error::Error(SourceLoc loc, const std::string& message)
    : std::runtime_error(compose(loc, message)), loc_(loc), message_(message) {}

std::string format_error(const Error& e) { return e.what(); }

std::string printable(std::string_view text, size_t max_chars) {
  std::string out;
  size_t shown = 0;
  for (size_t i = 0; i < text.size(); ++i) {
    if (shown == max_chars) return out + "...";
    const unsigned char c = static_cast<unsigned char>(text[i]);
    if (c == '\n') {
      out += "\\n";
    } else if (c == '\t') {
      out += "\\t";
    } else if (c == '\r') {
      out += "\\r";
    } else if (c < 0x20 || c >= 0x7f) {
      static const char* hex = "0123456789abcdef";
      out += "\\x";
      out += hex[c >> 4];
      out += hex[c & 15];
    } else {
      out += static_cast<char>(c);
    }
    ++shown;
  }
  return out;
}

}  // namespace tandem
