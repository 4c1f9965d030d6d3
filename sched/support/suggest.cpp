#include "sched/support/suggest.h"

#include <algorithm>

namespace tandem {

namespace {

// Optimal string alignment distance (Levenshtein with adjacent swaps).
size_t distance(const std::string& a, const std::string& b) {
  std::vector<std::vector<size_t>> d(a.size() + 1, std::vector<size_t>(b.size() + 1));
  for (size_t i = 0; i <= a.size(); ++i) d[i][0] = i;
  for (size_t j = 0; j <= b.size(); ++j) d[0][j] = j;
  for (size_t i = 1; i <= a.size(); ++i)
    for (size_t j = 1; j <= b.size(); ++j) {
      d[i][j] = std::min({d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + (a[i - 1] != b[j - 1])});
      if (i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1])
        d[i][j] = std::min(d[i][j], d[i - 2][j - 2] + 1);
    }
  return d[a.size()][b.size()];
}

}  // namespace

std::string did_you_mean(const std::string& word, const std::vector<std::string>& known) {
  if (word.size() > 64) return "";  // not a misspelling of a name
  const size_t limit = std::max<size_t>(1, word.size() / 3);
  const std::string* best = nullptr;
  size_t best_d = limit + 1;
  for (const std::string& k : known) {
    const size_t d = distance(word, k);
    if (d < best_d && d > 0) {
      best_d = d;
      best = &k;
    }
  }
  return best ? " (did you mean '" + *best + "'?)" : "";
}

}  // namespace tandem
