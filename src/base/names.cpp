// Layer base: small utilities every layer may use; includes nothing above base.
#include "gpuadvisor/base/names.hpp"

#include <algorithm>
#include <utility>

namespace gpuadvisor {

size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j)
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1)});
    std::swap(prev, cur);
  }
  return prev[b.size()];
}

std::vector<std::string> nearest_names(std::string_view name, const std::vector<std::string>& candidates, size_t limit) {
  std::vector<std::pair<size_t, std::string>> scored;
  for (const auto& c : candidates) scored.emplace_back(edit_distance(name, c), c);
  std::sort(scored.begin(), scored.end());
  std::vector<std::string> out;
  for (size_t k = 0; k < scored.size() && k < limit; ++k) out.push_back(scored[k].second);
  return out;
}

}  // namespace gpuadvisor
