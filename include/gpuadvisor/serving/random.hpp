// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// A small deterministic random source (splitmix64) and the draws the
// simulator needs, written out so that the same seed gives the same bytes on
// every standard library (std:: distributions are implementation-defined).
#pragma once
#include <cmath>
#include <cstdint>

namespace gpuadvisor {

class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  // Uniform on (0, 1), never 0 or 1.
  double uniform() { return (double(next() >> 11) + 0.5) * 0x1.0p-53; }
  double exponential(double mean) { return -mean * std::log(uniform()); }
  // Standard normal (Box-Muller, one of the pair).
  double normal() { return std::sqrt(-2 * std::log(uniform())) * std::cos(6.283185307179586 * uniform()); }
  // Gamma(shape, scale) (Marsaglia and Tsang 2000; shape < 1 boosted by u^(1/shape)).
  double gamma(double shape, double scale) {
    if (shape < 1) return gamma(shape + 1, scale) * std::pow(uniform(), 1 / shape);
    const double d = shape - 1.0 / 3, c = 1 / std::sqrt(9 * d);
    for (;;) {
      double x, v;
      do {
        x = normal();
        v = 1 + c * x;
      } while (v <= 0);
      v = v * v * v;
      const double u = uniform();
      if (std::log(u) < 0.5 * x * x + d - d * v + d * std::log(v)) return d * v * scale;
    }
  }

 private:
  uint64_t next() {
    uint64_t z = (state_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  uint64_t state_;
};

}  // namespace gpuadvisor
