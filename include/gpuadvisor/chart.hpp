// An SVG scatter of time against cost (`--chart FILE.svg`): one point per
// option and pricing, one Pareto frontier per series, the points with a role
// (the pick, the cheapest, the fastest) marked and labelled. Self-contained
// SVG 1.1, opens in any browser (docs/cli.md §Charts).
#pragma once
#include <string>
#include <vector>

namespace gpuadvisor {

struct ChartPoint {
  std::string label;   // e.g. "p5.48xlarge x 16"
  double x = 0;        // time (hours, or seconds per token)
  double y = 0;        // cost (USD)
  std::string series;  // "on-demand", "spot", ...
  std::string role;    // "" or "pick", "cheapest", "fastest"; several joined: "pick, cheapest"
};

struct Chart {
  std::string title;
  std::string x_label, y_label;
  std::vector<ChartPoint> points;
};

// Indices of the points on the Pareto frontier (no other point is both no
// larger in x and y and smaller in one), ordered by x.
std::vector<size_t> pareto_frontier(const std::vector<ChartPoint>& points);

// The same among only the points of one series; indices into `points`.
std::vector<size_t> pareto_frontier(const std::vector<ChartPoint>& points, const std::string& series);

// True when `role` (e.g. "pick, cheapest") names `what` ("pick").
bool has_role(const std::string& role, const std::string& what);

std::string render_svg(const Chart& chart);

}  // namespace gpuadvisor
