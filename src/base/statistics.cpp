// Layer base: small utilities every layer may use; includes nothing above base.
#include "gpuadvisor/base/statistics.hpp"

#include <algorithm>
#include <cmath>

namespace gpuadvisor {

double percentile(std::vector<double> v, double q) {
  std::sort(v.begin(), v.end());
  return percentile_of_sorted(v, q);
}

double percentile_of_sorted(const std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  const double pos = std::clamp(q, 0.0, 1.0) * (v.size() - 1);
  const size_t lo = static_cast<size_t>(std::floor(pos));
  const size_t hi = std::min(lo + 1, v.size() - 1);
  return v[lo] + (pos - lo) * (v[hi] - v[lo]);
}

std::vector<double> percentiles_by_selection(std::vector<double>& v, const std::vector<double>& ascending_q) {
  std::vector<double> out;
  size_t from = 0;  // the ranks below are in place, none above them smaller
  for (const double q : ascending_q) {
    if (v.empty()) {
      out.push_back(0);
      continue;
    }
    const double pos = std::clamp(q, 0.0, 1.0) * (v.size() - 1);
    const size_t lo = std::max(from, static_cast<size_t>(std::floor(pos)));
    std::nth_element(v.begin() + from, v.begin() + lo, v.end());
    const double next = lo + 1 < v.size() ? *std::min_element(v.begin() + lo + 1, v.end()) : v[lo];
    out.push_back(v[lo] + (pos - lo) * (next - v[lo]));
    from = lo;
  }
  return out;
}

}  // namespace gpuadvisor
