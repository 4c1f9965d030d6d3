// What a result needs to say where it came from: the build (version and git commit, fixed
// when CMake configured the tree), a file's content hash, and where the running binary is
// (models are found beside it, docs/models.md).
#pragma once

#include <string>

namespace tandem {

std::string tandem_version();  // "0.1.0 (git f8f1874)"; the commit is "unknown" outside git

// FNV-1a, 64 bits, as "fnv1a64:" and 16 hex digits: tells two model files apart (an edit
// changes it); not meant to resist forgery.
std::string content_hash(const std::string& bytes);

// The hash of a file's bytes, or "" when it cannot be read.
std::string file_hash(const std::string& path);

// The directory of the running executable ("" when the system does not say).
std::string executable_dir();

}  // namespace tandem
