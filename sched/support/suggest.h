// "did you mean" for a misspelt name: the closest known name within a small edit distance.
#pragma once

#include <string>
#include <vector>

namespace tandem {

// " (did you mean 'x'?)" when one known name is within max(1, size / 3) edits (insert, delete,
// substitute, swap two neighbours) of `word`; "" otherwise.
std::string did_you_mean(const std::string& word, const std::vector<std::string>& known);

}  // namespace tandem
