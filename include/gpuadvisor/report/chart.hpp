// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// An SVG scatter of time against cost (`--chart FILE.svg`): one point per
// option and pricing, one Pareto frontier per series, every option numbered
// on the plot and keyed in a table below it (number, instance x count, each
// pricing's time and cost, its role), the region and the prices' date and
// source under the title. Self-contained SVG 1.1, opens in any browser
// (docs/cli.md §Charts).
#pragma once
#include <string>
#include <vector>

namespace gpuadvisor {

struct ChartPoint {
  std::string label;   // e.g. "p5.48xlarge x 16"; points with the same label are one option (one number)
  double x = 0;        // time (hours, or milliseconds per token)
  double y = 0;        // cost (USD, or USD per month)
  std::string series;  // "on-demand", "spot, expected with interruptions", "spot, no interruptions", ...
  std::string role;    // "" or "pick", "cheapest", "fastest"; several joined: "pick, cheapest"
};

struct Chart {
  std::string title;
  std::string x_label, y_label;  // axis titles, with units
  std::string x_unit, y_unit;    // for the key table: "h", "ms"; "USD", "USD/month"
  std::vector<ChartPoint> points;
  std::string region;       // said under the title
  std::string prices_note;  // "prices as of 2026-11-29, embedded snapshot": the date and source (the CLI fills it)
};

// Indices of the points on the Pareto frontier (no other point is both no
// larger in x and y and smaller in one), ordered by x.
std::vector<size_t> pareto_frontier(const std::vector<ChartPoint>& points);

// The same among only the points of one series; indices into `points`.
std::vector<size_t> pareto_frontier(const std::vector<ChartPoint>& points, const std::string& series);

// True when `role` (e.g. "pick, cheapest") names `what` ("pick").
bool has_role(const std::string& role, const std::string& what);

// The colour a series is drawn in, the same in every chart: on-demand blue,
// spot with expected interruptions orange, spot with no interruptions green;
// any other name a fixed colour of its own (from its name, not its order).
std::string series_colour(const std::string& series);

std::string render_svg(const Chart& chart);

}  // namespace gpuadvisor
