// Layer base: small utilities every layer may use; includes nothing above base.
// Percentiles of a sample, for validation errors and simulated latencies.
#pragma once
#include <vector>

namespace gpuadvisor {

// The q-quantile (0..1) of v, linear between the closest ranks (numpy's
// default: the median of an even count is the mean of the middle two); 0 for
// an empty sample.
double percentile(std::vector<double> v, double q);
// The same of a sample already in ascending order (no copy, no sort).
double percentile_of_sorted(const std::vector<double>& sorted, double q);
// The same for several quantiles, in ascending order, by selecting the ranks
// they need instead of sorting the whole sample (v is reordered): the values
// are those percentile_of_sorted gives on v sorted.
std::vector<double> percentiles_by_selection(std::vector<double>& v, const std::vector<double>& ascending_q);

}  // namespace gpuadvisor
