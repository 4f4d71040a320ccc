#include "gpuadvisor/chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuadvisor {

std::vector<size_t> pareto_frontier(const std::vector<ChartPoint>& p) {
  std::vector<size_t> out;
  for (size_t i = 0; i < p.size(); ++i) {
    bool dominated = false;
    for (size_t j = 0; j < p.size() && !dominated; ++j)
      dominated = j != i && p[j].x <= p[i].x && p[j].y <= p[i].y && (p[j].x < p[i].x || p[j].y < p[i].y);
    if (!dominated) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](size_t a, size_t b) { return std::tie(p[a].x, p[a].y, p[a].label) < std::tie(p[b].x, p[b].y, p[b].label); });
  // Equal points: keep one.
  out.erase(std::unique(out.begin(), out.end(), [&](size_t a, size_t b) { return p[a].x == p[b].x && p[a].y == p[b].y; }), out.end());
  return out;
}

namespace {

std::string escape(const std::string& s) {
  std::string o;
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

// A log axis when the data spans more than a factor of 20, else linear.
struct Axis {
  double lo, hi;
  bool log;
  double map(double v, double from, double to) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return from + t * (to - from);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (log) {
      for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi * 1.0001; d *= 10)
        for (double m : {1.0, 2.0, 5.0})
          if (d * m >= lo * 0.9999 && d * m <= hi * 1.0001) t.push_back(d * m);
    } else {
      const double step = std::pow(10, std::floor(std::log10((hi - lo) / 4)));
      for (double v = std::ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) t.push_back(v);
      while (t.size() > 8) {
        std::vector<double> half;
        for (size_t i = 0; i < t.size(); i += 2) half.push_back(t[i]);
        t = half;
      }
    }
    return t;
  }
};

Axis axis_for(const std::vector<ChartPoint>& p, bool x) {
  double lo = 1e300, hi = -1e300;
  for (const auto& q : p) {
    const double v = x ? q.x : q.y;
    lo = std::min(lo, v);
    hi = std::max(hi, v);
  }
  if (lo == hi) {
    lo = lo > 0 ? lo / 2 : lo - 1;
    hi = hi > 0 ? hi * 2 : hi + 1;
  }
  const bool log = lo > 0 && hi / lo > 20;
  if (log) return {lo / 1.3, hi * 1.3, true};
  const double pad = (hi - lo) * 0.08;
  return {std::max(0.0, lo - pad), hi + pad, false};
}

std::string tick_text(double v) {
  if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

}  // namespace

std::string render_svg(const Chart& chart) {
  const double W = 900, H = 560, left = 90, right = 30, top = 50, bottom = 70;
  std::vector<ChartPoint> pts;
  for (const auto& p : chart.points)
    if (std::isfinite(p.x) && std::isfinite(p.y) && p.x > 0 && p.y > 0) pts.push_back(p);
  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>{2}</title>\n<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{2}</text>\n",
      W, H, escape(chart.title), W / 2);
  if (pts.empty()) return s + "<text x=\"450\" y=\"280\" text-anchor=\"middle\">no priced options</text>\n</svg>\n";
  const Axis ax = axis_for(pts, true), ay = axis_for(pts, false);
  auto X = [&](double v) { return ax.map(v, left, W - right); };
  auto Y = [&](double v) { return ay.map(v, H - bottom, top); };
  s += fmt::format("<g class=\"axes\" stroke=\"#444\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/>\n</g>\n",
                   left, H - bottom, W - right, top);
  s += "<g class=\"ticks\" fill=\"#444\">\n";
  for (double t : ax.ticks())
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                     X(t), H - bottom, top, H - bottom + 18, tick_text(t));
  for (double t : ay.ticks())
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                     left, Y(t), W - right, left - 6, Y(t) + 4, tick_text(t));
  s += "</g>\n";
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", (left + W - right) / 2, H - 25, escape(chart.x_label),
                   ax.log ? " (log scale)" : "");
  s += fmt::format("<text x=\"20\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0})\">{1}{2}</text>\n", (top + H - bottom) / 2,
                   escape(chart.y_label), ay.log ? " (log scale)" : "");
  // Series: stable colours and shapes in order of first appearance.
  static const char* colours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
  std::map<std::string, size_t> series;
  std::vector<std::string> order;
  for (const auto& p : pts)
    if (series.emplace(p.series, series.size()).second) order.push_back(p.series);
  const auto frontier = pareto_frontier(pts);
  std::string poly;
  for (size_t i : frontier) poly += fmt::format("{}{:.1f},{:.1f}", poly.empty() ? "" : " ", X(pts[i].x), Y(pts[i].y));
  s += fmt::format("<polyline class=\"pareto\" points=\"{}\" fill=\"none\" stroke=\"#333\" stroke-dasharray=\"5,3\"/>\n", poly);
  s += "<g class=\"points\">\n";
  for (const auto& p : pts) {
    const size_t k = series[p.series] % 5;
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.75\"><title>{} ({}): {} / {}</title></circle>\n",
                     X(p.x), Y(p.y), colours[k], escape(p.label), escape(p.series), tick_text(p.x), tick_text(p.y));
  }
  s += "</g>\n<g class=\"pareto-labels\" font-size=\"11\">\n";
  // At most 12 labels, evenly spread along the frontier, so they stay readable.
  const size_t every = (frontier.size() + 11) / 12;
  for (size_t k = 0; k < frontier.size(); ++k) {
    if (k % every != 0 && k + 1 != frontier.size()) continue;
    const size_t i = frontier[k];
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\">{} ({})</text>\n", X(pts[i].x) + 6, Y(pts[i].y) - 6, escape(pts[i].label), escape(pts[i].series));
  }
  s += "</g>\n<g class=\"legend\">\n";
  for (size_t k = 0; k < order.size(); ++k)
    s += fmt::format("<circle cx=\"{0}\" cy=\"{1}\" r=\"5\" fill=\"{2}\"/><text x=\"{3}\" y=\"{4}\">{5}</text>\n", W - right - 150, top + 10 + 18 * k,
                     colours[k % 5], W - right - 140, top + 14 + 18 * k, escape(order[k]));
  s += fmt::format("<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#333\" stroke-dasharray=\"5,3\"/><text x=\"{3}\" y=\"{4}\">Pareto frontier</text>\n",
                   W - right - 155, top + 10 + 18 * order.size(), W - right - 145, W - right - 140, top + 14 + 18 * order.size());
  s += "</g>\n</svg>\n";
  return s;
}

}  // namespace gpuadvisor
