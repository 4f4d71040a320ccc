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

}  // namespace gpuadvisor
