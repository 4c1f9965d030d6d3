// User-facing errors (bad input, bad options) carry a source location; internal invariants
// are asserts. The two are never mixed: an Error always means the user can fix something.
#pragma once

#include <stdexcept>
#include <string>
#include <string_view>

namespace tandem {

struct SourceLoc {
  const char* file = nullptr;  // interned, lives for the whole process
  int line = 0;
  int col = 0;

  bool valid() const { return file != nullptr; }
  std::string str() const;  // "file:line:col", "file:line", "file" or ""
};

// Returns a process-lifetime copy of `name` so SourceLoc can hold a bare pointer.
const char* intern_file_name(const std::string& name);

class Error : public std::runtime_error {
 public:
  Error(SourceLoc loc, const std::string& message);
  explicit Error(const std::string& message) : Error(SourceLoc{}, message) {}

  const SourceLoc& loc() const { return loc_; }
  const std::string& message() const { return message_; }

 private:
  SourceLoc loc_;
  std::string message_;
};

// "file:line:col: error: message", the one line every user error prints.
std::string format_error(const Error& e);

// User text echoed in a message: control characters and bytes that are not printable ASCII
// escaped (\n, \t, \r, \x01, \xc3), and cut to `max_chars` characters with "..." after the
// cut, so that every message stays one readable line. Every message that echoes input passes
// it through here (std::string::npos: escaped, never cut); an Error's line and every line the
// command prints on stderr also pass whole, so a control character never reaches the terminal.
// The Python front end's `tandem.errors.printable` is the same function.
constexpr size_t kEchoMaxChars = 40;
std::string printable(std::string_view text, size_t max_chars = kEchoMaxChars);

}  // namespace tandem
