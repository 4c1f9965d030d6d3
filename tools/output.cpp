#include "tools/output.h"

#include <iostream>

#include "sched/support/output.h"

namespace tandem::cli {

void emit(const std::string& text, const std::string& path) {
  if (path.empty())
    std::cout << text;
  else
    write_file_atomic(path, text);
}

}  // namespace tandem::cli
