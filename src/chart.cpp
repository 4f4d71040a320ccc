#include "gpuadvisor/chart.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

namespace gpuadvisor {

namespace {

// The frontier among the points for which keep(i) holds.
template <class Keep>
std::vector<size_t> frontier_of(const std::vector<ChartPoint>& p, Keep keep) {
  std::vector<size_t> out;
  for (size_t i = 0; i < p.size(); ++i) {
    if (!keep(i)) continue;
    bool dominated = false;
    for (size_t j = 0; j < p.size() && !dominated; ++j)
      dominated = j != i && keep(j) && p[j].x <= p[i].x && p[j].y <= p[i].y && (p[j].x < p[i].x || p[j].y < p[i].y);
    if (!dominated) out.push_back(i);
  }
  std::sort(out.begin(), out.end(), [&](size_t a, size_t b) { return std::tie(p[a].x, p[a].y, p[a].label) < std::tie(p[b].x, p[b].y, p[b].label); });
  // Equal points: keep one.
  out.erase(std::unique(out.begin(), out.end(), [&](size_t a, size_t b) { return p[a].x == p[b].x && p[a].y == p[b].y; }), out.end());
  return out;
}

}  // namespace

std::vector<size_t> pareto_frontier(const std::vector<ChartPoint>& p) {
  return frontier_of(p, [](size_t) { return true; });
}

std::vector<size_t> pareto_frontier(const std::vector<ChartPoint>& p, const std::string& series) {
  return frontier_of(p, [&](size_t i) { return p[i].series == series; });
}

bool has_role(const std::string& role, const std::string& what) {
  for (size_t b = 0; b < role.size();) {
    size_t e = role.find(',', b);
    if (e == std::string::npos) e = role.size();
    size_t s = b;
    while (s < e && role[s] == ' ') ++s;
    size_t t = e;
    while (t > s && role[t - 1] == ' ') --t;
    if (role.compare(s, t - s, what) == 0 && t - s == what.size()) return true;
    b = e + 1;
  }
  return false;
}

namespace {

constexpr double kCharW = 7;     // approximate character width at font-size 12
constexpr double kLabelGap = 16;  // minimum vertical distance between point labels
const char* const kColours[] = {"#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"};
const char* const kPickColour = "#e6007e";

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

double text_width(const std::string& s, double char_w = kCharW) { return char_w * static_cast<double>(s.size()); }

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

// One legend entry: a series, the frontier line, or the pick.
struct LegendItem {
  enum Kind { kSeries, kFrontier, kPick } kind;
  std::string text;
  size_t colour = 0;
  double x = 0, y = 0;  // marker centre
};

struct Layout {
  double W = 900, left = 90, right = 30, top = 50, plot_bottom = 490, H = 0;
  double plot_right() const { return W - right; }
};

double item_width(const LegendItem& it) { return 26 + text_width(it.text) + 18; }

// Legend below the plot, items flowing left to right and wrapping; sets H.
void place_legend(std::vector<LegendItem>& items, Layout& L) {
  const double row_h = 20, y0 = L.plot_bottom + 62;
  double x = L.left, y = y0;
  for (auto& it : items) {
    if (x > L.left && x + item_width(it) > L.plot_right()) {
      x = L.left;
      y += row_h;
    }
    it.x = x + 10;
    it.y = y;
    x += item_width(it);
  }
  L.H = y + 22;
}

std::vector<LegendItem> legend_items(const std::vector<std::string>& order, bool has_pick) {
  std::vector<LegendItem> items;
  for (size_t k = 0; k < order.size(); ++k) items.push_back({LegendItem::kSeries, order[k], k % 5});
  items.push_back({LegendItem::kFrontier, "Pareto frontier (one per series)"});
  if (has_pick) items.push_back({LegendItem::kPick, "recommended pick"});
  return items;
}

// Canvas wide enough for the title and the widest legend item.
Layout layout_for(const Chart& c, const std::vector<LegendItem>& items) {
  Layout L;
  L.W = std::max(L.W, text_width(c.title, 9.5) + 40);
  for (const auto& it : items) L.W = std::max(L.W, L.left + item_width(it) + L.right);
  return L;
}

struct Label {
  double px, py;  // the point
  double x, y;    // text anchor and baseline
  double w;
  std::string text;
  size_t colour;
  bool pick;
  bool left_of_point = false;  // then anchored at its end
  double start() const { return left_of_point ? x - w : x; }
};

// Right of the point, or left where that would leave the plot; clamped inside.
void place_horizontally(Label& l, const Layout& L) {
  l.left_of_point = l.px + 18 + l.w > L.plot_right() - 2;
  const double start = std::clamp(l.left_of_point ? l.px - 18 - l.w : l.px + 18, L.left + 4, std::max(L.left + 4, L.plot_right() - 2 - l.w));
  l.x = l.left_of_point ? start + l.w : start;
}

// Stack the labels top to bottom, at least kLabelGap apart, inside the plot.
void place_vertically(std::vector<Label>& ls, const Layout& L) {
  std::sort(ls.begin(), ls.end(), [](const Label& a, const Label& b) { return std::tie(a.py, a.px, a.text) < std::tie(b.py, b.px, b.text); });
  const double lo = L.top + 14, hi = L.plot_bottom - 6;
  for (size_t i = 0; i < ls.size(); ++i) ls[i].y = std::max(i ? ls[i - 1].y + kLabelGap : lo, ls[i].py + 4);
  for (size_t i = ls.size(); i-- > 0;) ls[i].y = std::min(ls[i].y, i + 1 < ls.size() ? ls[i + 1].y - kLabelGap : hi);
}

std::vector<Label> place_labels(const std::vector<ChartPoint>& pts, const std::map<std::string, size_t>& series, const Axis& ax, const Axis& ay,
                                const Layout& L) {
  std::vector<Label> ls;
  for (const auto& p : pts) {
    if (p.role.empty()) continue;
    const std::string text = p.role + ": " + p.label;
    Label l{ax.map(p.x, L.left, L.plot_right()), ay.map(p.y, L.plot_bottom, L.top), 0, 0, text_width(text, 7.5), text, series.at(p.series) % 5,
            has_role(p.role, "pick")};
    place_horizontally(l, L);
    ls.push_back(l);
  }
  place_vertically(ls, L);
  return ls;
}

std::string header(const Chart& c, const Layout& L) {
  return fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"sans-serif\" font-size=\"12\">\n"
      "<title>{2}</title>\n<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{2}</text>\n",
      L.W, L.H, escape(c.title), L.W / 2);
}

std::string axes(const Chart& c, const Axis& ax, const Axis& ay, const Layout& L) {
  auto X = [&](double v) { return ax.map(v, L.left, L.plot_right()); };
  auto Y = [&](double v) { return ay.map(v, L.plot_bottom, L.top); };
  std::string s = fmt::format("<g class=\"axes\" stroke=\"#444\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/>\n</g>\n",
                              L.left, L.plot_bottom, L.plot_right(), L.top);
  s += "<g class=\"ticks\" fill=\"#444\">\n";
  for (double t : ax.ticks())
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#ddd\"/><text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                     X(t), L.plot_bottom, L.top, L.plot_bottom + 18, tick_text(t));
  for (double t : ay.ticks())
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#ddd\"/><text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                     L.left, Y(t), L.plot_right(), L.left - 6, Y(t) + 4, tick_text(t));
  s += "</g>\n";
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", (L.left + L.plot_right()) / 2, L.plot_bottom + 40,
                   escape(c.x_label), ax.log ? " (log scale)" : "");
  s += fmt::format("<text x=\"20\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0})\">{1}{2}</text>\n", (L.top + L.plot_bottom) / 2,
                   escape(c.y_label), ay.log ? " (log scale)" : "");
  return s;
}

std::string pick_ring(double x, double y) {
  return fmt::format("<circle class=\"pick\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"9\" fill=\"none\" stroke=\"{}\" stroke-width=\"3\"/>\n", x, y, kPickColour);
}

std::string labels_svg(const std::vector<Label>& ls) {
  std::string s = "<g class=\"point-labels\" stroke-width=\"0.8\">\n";
  for (const auto& l : ls) {
    const double ex = l.start() > l.px ? l.start() - 2 : l.start() + l.w + 2;  // leader line to the near end of the text
    s += fmt::format("<line x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#888\"/>", l.px, l.py, ex, l.y - 4);
    // A white halo keeps the text readable over lines and points.
    s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\" stroke=\"white\" stroke-width=\"3\" paint-order=\"stroke\"{}{}>{}</text>\n", l.x, l.y,
                     l.pick ? kPickColour : kColours[l.colour], l.left_of_point ? " text-anchor=\"end\"" : "", l.pick ? " font-weight=\"bold\"" : "",
                     escape(l.text));
  }
  return s + "</g>\n";
}

std::string legend_svg(const std::vector<LegendItem>& items, const Layout& L) {
  double w = 0, h = 0;
  for (const auto& it : items) {
    w = std::max(w, it.x - 10 + item_width(it) - L.left);
    h = std::max(h, it.y - items.front().y + 20);
  }
  std::string s = fmt::format("<g class=\"legend\">\n<rect class=\"legend-box\" x=\"{}\" y=\"{}\" width=\"{}\" height=\"{}\" fill=\"none\" stroke=\"#ccc\"/>\n",
                              L.left, items.front().y - 12, w, h + 4);
  for (const auto& it : items) {
    if (it.kind == LegendItem::kPick)
      s += pick_ring(it.x, it.y);
    else if (it.kind == LegendItem::kFrontier)
      s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\"/>", it.x - 10, it.y, it.x + 10, it.y);
    else
      s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/>", it.x, it.y, kColours[it.colour]);
    s += fmt::format("<text x=\"{}\" y=\"{}\">{}</text>\n", it.x + 16, it.y + 4, escape(it.text));
  }
  return s + "</g>\n";
}

}  // namespace

std::string render_svg(const Chart& chart) {
  std::vector<ChartPoint> pts;
  for (const auto& p : chart.points)
    if (std::isfinite(p.x) && std::isfinite(p.y) && p.x > 0 && p.y > 0) pts.push_back(p);
  // Series: stable colours in order of first appearance.
  std::map<std::string, size_t> series;
  std::vector<std::string> order;
  bool any_pick = false;
  for (const auto& p : pts) {
    if (series.emplace(p.series, series.size()).second) order.push_back(p.series);
    any_pick = any_pick || has_role(p.role, "pick");
  }
  auto items = legend_items(order, any_pick);
  Layout L = layout_for(chart, items);
  if (pts.empty()) {
    L.H = 560;
    return header(chart, L) + fmt::format("<text x=\"{}\" y=\"280\" text-anchor=\"middle\">no priced options</text>\n</svg>\n", L.W / 2);
  }
  place_legend(items, L);
  const Axis ax = axis_for(pts, true), ay = axis_for(pts, false);
  auto X = [&](double v) { return ax.map(v, L.left, L.plot_right()); };
  auto Y = [&](double v) { return ay.map(v, L.plot_bottom, L.top); };
  std::string s = header(chart, L) + axes(chart, ax, ay, L);
  for (size_t k = 0; k < order.size(); ++k) {
    std::string poly;
    for (size_t i : pareto_frontier(pts, order[k])) poly += fmt::format("{}{:.1f},{:.1f}", poly.empty() ? "" : " ", X(pts[i].x), Y(pts[i].y));
    s += fmt::format("<polyline class=\"pareto\" data-series=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\"/>\n",
                     escape(order[k]), poly, kColours[k % 5]);
  }
  s += "<g class=\"points\">\n";
  for (const auto& p : pts)
    s += fmt::format("<circle cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\" fill-opacity=\"0.75\"><title>{} ({}): {} / {}</title></circle>\n",
                     X(p.x), Y(p.y), kColours[series[p.series] % 5], escape(p.label), escape(p.series), tick_text(p.x), tick_text(p.y));
  for (const auto& p : pts)
    if (has_role(p.role, "pick")) s += pick_ring(X(p.x), Y(p.y));
  s += "</g>\n" + labels_svg(place_labels(pts, series, ax, ay, L)) + legend_svg(items, L) + "</svg>\n";
  return s;
}

}  // namespace gpuadvisor
