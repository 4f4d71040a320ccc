// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
#include "gpuadvisor/report/chart.hpp"
#include "gpuadvisor/report/html.hpp"  // html_escape: SVG text is escaped as HTML's

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "gpuadvisor/base/quantity.hpp"

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

// The series every chart draws, in this order and these colours.
struct KnownSeries {
  const char* name;
  const char* colour;
};
constexpr KnownSeries kKnownSeries[] = {
    {"on-demand", "#1f77b4"},          {"Capacity Block, whole days billed", "#9467bd"}, {"reserved at the on-demand rate", "#8c564b"},
    {"1-year savings plan", "#17becf"}, {"3-year savings plan", "#7f7f7f"},               {"spot, expected with interruptions", "#e66100"},
    {"spot, no interruptions", "#2ca02c"}};
const char* const kOtherColours[] = {"#9467bd", "#8c564b", "#17becf", "#7f7f7f", "#bcbd22"};
const char* const kPickColour = "#e6007e";

size_t series_rank(const std::string& s) {
  for (size_t k = 0; k < std::size(kKnownSeries); ++k)
    if (s == kKnownSeries[k].name) return k;
  return std::size(kKnownSeries);
}

}  // namespace

std::string series_colour(const std::string& s) {
  const size_t k = series_rank(s);
  if (k < std::size(kKnownSeries)) return kKnownSeries[k].colour;
  std::uint32_t h = 2166136261u;  // FNV-1a of the name: the same name, the same colour, whatever else is drawn
  for (unsigned char c : s) h = (h ^ c) * 16777619u;
  return kOtherColours[h % std::size(kOtherColours)];
}

namespace {

constexpr double kCharW = 7.6;  // a character's width at font-size 12 (DejaVu Sans digits are 0.636 em)
constexpr double kRowH = 18;    // legend and key-table rows
constexpr double kTagH = 15;    // a number tag's box: 12 px text, baseline 4.5 below its middle

double text_width(const std::string& s, double size = 12) { return kCharW * size / 12 * static_cast<double>(s.size()); }

struct Box {
  double x0, y0, x1, y1;
  bool overlaps(const Box& o) const { return x0 < o.x1 && o.x0 < x1 && y0 < o.y1 && o.y0 < y1; }
  bool within(const Box& o) const { return x0 >= o.x0 && x1 <= o.x1 && y0 >= o.y0 && y1 <= o.y1; }
  Box grown(double d) const { return {x0 - d, y0 - d, x1 + d, y1 + d}; }
};
Box around(double x, double y, double r) { return {x - r, y - r, x + r, y + r}; }

struct Seg {
  double x0, y0, x1, y1;
};

// Whether the segment meets the box (Liang-Barsky clipping).
bool crosses(const Seg& s, const Box& b) {
  double t0 = 0, t1 = 1;
  const double dx = s.x1 - s.x0, dy = s.y1 - s.y0;
  const double p[4] = {-dx, dx, -dy, dy}, q[4] = {s.x0 - b.x0, b.x1 - s.x0, s.y0 - b.y0, b.y1 - s.y0};
  for (int i = 0; i < 4; ++i) {
    if (p[i] == 0) {
      if (q[i] < 0) return false;
      continue;
    }
    const double t = q[i] / p[i];
    if (p[i] < 0) t0 = std::max(t0, t);
    else t1 = std::min(t1, t);
    if (t0 > t1) return false;
  }
  return true;
}

// A linear axis from zero (a 3% spread looks like 3%), or a log axis when the
// data spans more than a factor of 20.
struct Axis {
  double lo, hi, step;
  bool log;
  double map(double v, double from, double to) const {
    const double t = log ? (std::log10(v) - std::log10(lo)) / (std::log10(hi) - std::log10(lo)) : (v - lo) / (hi - lo);
    return from + t * (to - from);
  }
  std::vector<double> ticks() const {
    std::vector<double> t;
    if (!log) {
      for (int i = 0; lo + i * step <= hi * (1 + 1e-9); ++i) t.push_back(lo + i * step);
      return t;
    }
    const double decades = std::log10(hi / lo);
    for (double d = std::pow(10, std::floor(std::log10(lo))); d <= hi; d *= 10)
      for (double m : decades > 3 ? std::vector<double>{1} : std::vector<double>{1, 2, 5})
        if (d * m >= lo && d * m <= hi) t.push_back(d * m);
    return t;
  }
};

// 1, 2 or 5 times a power of ten: about five steps to `span`.
double nice_step(double span) {
  const double raw = span / 5, mag = std::pow(10, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 5.0})
    if (m * mag >= raw * (1 - 1e-9)) return m * mag;
  return 10 * mag;
}

Axis axis_for(const std::vector<ChartPoint>& p, bool x) {
  double lo = 1e300, hi = -1e300;
  for (const auto& q : p) {
    lo = std::min(lo, x ? q.x : q.y);
    hi = std::max(hi, x ? q.x : q.y);
  }
  if (hi / lo > 20) return {lo / 1.25, hi * 1.25, 0, true};
  const double step = nice_step(hi * 1.04);
  return {0, std::ceil(hi * 1.04 / step) * step, step, false};
}

std::string tick_text(double v) {
  if (v >= 1e6) return fmt::format("{:g}M", v / 1e6);
  if (v >= 1e3) return fmt::format("{:g}k", v / 1e3);
  return fmt::format("{:g}", v);
}

// Three significant figures, thousands separated: 1,234; 56.7; 0.123.
std::string sig3(double v) {
  if (v >= 100) return format_thousands(v, 0);
  if (v >= 10) return fmt::format("{:.1f}", v);
  if (v >= 1) return fmt::format("{:.2f}", v);
  return fmt::format("{:.3g}", v);
}

// "12.3 h, $4,567" or "$4,567/month" from the units.
std::string key_cell(const Chart& c, const ChartPoint& p) {
  const std::string y_suffix = c.y_unit.rfind("USD", 0) == 0 ? c.y_unit.substr(3) : c.y_unit.empty() ? "" : " " + c.y_unit;
  const std::string x = sig3(p.x) + (c.x_unit.empty() ? "" : " " + c.x_unit);
  return fmt::format("{}, ${}{}", x, p.y >= 100 ? format_thousands(p.y, 0) : fmt::format("{:.2f}", p.y), y_suffix);
}

}  // namespace

namespace {

// What is drawn: the finite positive points, their series in legend order,
// each point's option number (points with one label are one option) and the
// frontier of each series.
struct Drawn {
  std::vector<ChartPoint> pts;
  std::vector<std::string> series;
  std::vector<int> number;
  std::vector<std::string> options;
  std::vector<std::vector<size_t>> frontiers;  // per series, indices into pts
  std::vector<bool> on_frontier;
  bool any_pick = false;
  bool any_frontier_line() const {
    return std::any_of(frontiers.begin(), frontiers.end(), [](const auto& f) { return f.size() >= 2; });
  }
};

Drawn drawn_of(const Chart& c) {
  Drawn d;
  for (const auto& p : c.points)
    if (std::isfinite(p.x) && std::isfinite(p.y) && p.x > 0 && p.y > 0) d.pts.push_back(p);
  std::map<std::string, int> numbers;
  for (const auto& p : d.pts) {
    if (numbers.emplace(p.label, static_cast<int>(d.options.size()) + 1).second) d.options.push_back(p.label);
    d.number.push_back(numbers[p.label]);
    if (std::find(d.series.begin(), d.series.end(), p.series) == d.series.end()) d.series.push_back(p.series);
    d.any_pick = d.any_pick || has_role(p.role, "pick");
  }
  std::stable_sort(d.series.begin(), d.series.end(), [](const std::string& a, const std::string& b) { return series_rank(a) < series_rank(b); });
  d.on_frontier.assign(d.pts.size(), false);
  for (const auto& s : d.series) {
    d.frontiers.push_back(pareto_frontier(d.pts, s));
    for (size_t i : d.frontiers.back()) d.on_frontier[i] = true;
  }
  return d;
}

// The key below the plot: one row per option, its time and cost under each
// pricing drawn, and its role.
struct KeyTable {
  std::vector<std::string> header;
  std::vector<std::string> colour;  // per column; "" for the default
  std::vector<std::vector<std::string>> rows;
  std::vector<bool> pick_row;
  std::vector<double> col_x;  // offsets from the table's left
  double width = 0;
};

KeyTable key_table(const Chart& c, const Drawn& d) {
  KeyTable k;
  k.header = {"#", "option"};
  k.colour = {"", ""};
  for (const auto& s : d.series) k.header.push_back(s), k.colour.push_back(series_colour(s));
  k.header.push_back("role");
  k.colour.push_back("");
  k.rows.assign(d.options.size(), std::vector<std::string>(k.header.size()));
  k.pick_row.assign(d.options.size(), false);
  for (size_t o = 0; o < d.options.size(); ++o) k.rows[o][0] = std::to_string(o + 1), k.rows[o][1] = d.options[o];
  for (size_t i = 0; i < d.pts.size(); ++i) {
    const auto& p = d.pts[i];
    auto& row = k.rows[static_cast<size_t>(d.number[i]) - 1];
    const size_t col = 2 + static_cast<size_t>(std::find(d.series.begin(), d.series.end(), p.series) - d.series.begin());
    if (row[col].empty()) row[col] = key_cell(c, p);
    if (!p.role.empty() && row.back().find(p.role) == std::string::npos) row.back() += (row.back().empty() ? "" : ", ") + p.role;
    if (has_role(p.role, "pick")) k.pick_row[static_cast<size_t>(d.number[i]) - 1] = true;
  }
  double x = 0;
  for (size_t col = 0; col < k.header.size(); ++col) {
    double w = text_width(k.header[col]);
    for (const auto& r : k.rows) w = std::max(w, text_width(r[col]));
    k.col_x.push_back(x);
    x += w + 18;
  }
  k.width = x - 18;
  return k;
}

// Lines of at most `chars` characters, broken at spaces.
std::vector<std::string> wrap(const std::string& s, size_t chars) {
  std::vector<std::string> out;
  std::string line;
  for (size_t b = 0; b < s.size();) {
    size_t e = s.find(' ', b);
    if (e == std::string::npos) e = s.size();
    const std::string word = s.substr(b, e - b);
    if (!line.empty() && line.size() + 1 + word.size() > chars) out.push_back(line), line.clear();
    line += (line.empty() ? "" : " ") + word;
    b = e + 1;
  }
  if (!line.empty()) out.push_back(line);
  return out;
}

struct LegendItem {
  enum Kind { kSeries, kFrontier, kPick } kind;
  std::string text;
  std::string colour;
  double x = 0, y = 0;  // marker centre
};
double item_width(const LegendItem& it) { return 26 + text_width(it.text) + 18; }

// Only what is drawn: the series, the frontier where one has two points or more, the pick.
std::vector<LegendItem> legend_items(const Drawn& d) {
  std::vector<LegendItem> items;
  for (const auto& s : d.series) items.push_back({LegendItem::kSeries, s, series_colour(s)});
  if (d.any_frontier_line()) items.push_back({LegendItem::kFrontier, "Pareto frontier (one per series)", "#555"});
  if (d.any_pick) items.push_back({LegendItem::kPick, "recommended pick", kPickColour});
  return items;
}

struct PageLayout {
  double W = 900, left = 90, right = 30;
  std::vector<std::string> subtitle;
  double top = 0, bottom = 0, key_y = 0, H = 0;
  double plot_right() const { return W - right; }
  Box plot() const { return {left, top, plot_right(), bottom}; }
};

// Top to bottom: title, subtitle (region, prices), plot, axis titles, legend, key table.
PageLayout layout_for(const Chart& c, std::vector<LegendItem>& items, const KeyTable& k) {
  PageLayout L;
  std::string sub = c.region.empty() ? "" : "region " + c.region;
  if (!c.prices_note.empty()) sub += (sub.empty() ? "" : "; ") + c.prices_note;
  L.subtitle = wrap(sub, 110);
  L.W = std::max({L.W, text_width(c.title, 16) + 40, L.left + k.width + L.right});
  for (const auto& line : L.subtitle) L.W = std::max(L.W, text_width(line) + 40);
  for (const auto& it : items) L.W = std::max(L.W, L.left + item_width(it) + L.right);
  L.top = 48 + kRowH * static_cast<double>(L.subtitle.size());
  L.bottom = L.top + 420;
  double x = L.left, y = L.bottom + 66;
  for (auto& it : items) {
    if (x > L.left && x + item_width(it) > L.plot_right()) x = L.left, y += kRowH;
    it.x = x + 10, it.y = y;
    x += item_width(it);
  }
  L.key_y = y + (items.empty() ? 0 : kRowH) + 20;
  L.H = L.key_y + kRowH * static_cast<double>(k.rows.size() + 1) + 10;
  return L;
}

}  // namespace

namespace {

// A point's number on the plot: a box clear of every point, line and other
// tag, next to its point or joined to it by a leader line.
struct Tag {
  size_t point;
  std::string text;
  Box box;
  bool leader = false;
  Seg line{};
};

struct Scene {
  std::vector<double> px, py;  // the points in pixels
  std::vector<Seg> lines;      // the frontiers' segments
  Box plot{};
};

// `far`: a crowded frontier or role point's leader may pass over other points (never over a number).
bool tag_fits(const Scene& s, const std::vector<Tag>& placed, const Tag& t, const Drawn& d, bool far) {
  if (!t.box.within(s.plot.grown(-2))) return false;
  for (size_t j = 0; j < s.px.size(); ++j)
    if (t.box.overlaps(around(s.px[j], s.py[j], has_role(d.pts[j].role, "pick") ? 11 : 5.5))) return false;
  for (const auto& l : s.lines)
    if (crosses(l, t.box)) return false;
  for (const auto& o : placed) {
    if (t.box.overlaps(o.box.grown(2)) || (o.leader && crosses(o.line, t.box))) return false;
    if (t.leader && crosses(t.line, o.box.grown(1))) return false;
  }
  if (t.leader && !far)
    for (size_t j = 0; j < s.px.size(); ++j)
      if (j != t.point && crosses(t.line, around(s.px[j], s.py[j], 3.5))) return false;
  return true;
}

// Around the point at growing distances, 16 directions each; from 14 px out
// with a leader. `far`: further out, in 32 directions, the leader over points.
std::optional<Tag> place_tag(const Scene& s, const std::vector<Tag>& placed, size_t i, const Drawn& d, bool far) {
  static const std::vector<double> kNear{0, 180, 90, 270, 45, 135, 315, 225, 22.5, 157.5, 67.5, 112.5, 337.5, 202.5, 292.5, 247.5};
  std::vector<double> angles = kNear;
  if (far)
    for (double a : kNear) angles.push_back(a + 11.25);
  const std::vector<double> radii = far ? std::vector<double>{14, 22, 32, 46, 64, 90, 125, 170, 220, 280, 350, 450, 600}
                                        : std::vector<double>{1, 5, 14, 22, 32, 46, 64, 90, 125, 170};
  const std::string text = std::to_string(d.number[i]);
  const double w = text_width(text) + 4, ring = has_role(d.pts[i].role, "pick") ? 11 : 5.5;
  for (double r : radii) {
    for (double a : angles) {
      const double c = std::cos(a * M_PI / 180), sn = std::sin(a * M_PI / 180);
      const double cx = s.px[i] + c * (ring + r + w / 2), cy = s.py[i] - sn * (ring + r + kTagH / 2);
      Tag t{i, text, {cx - w / 2, cy - kTagH / 2, cx + w / 2, cy + kTagH / 2}};
      if (r >= 14) {
        const double ex = std::clamp(s.px[i], t.box.x0, t.box.x1), ey = std::clamp(s.py[i], t.box.y0, t.box.y1);
        const double len = std::hypot(ex - s.px[i], ey - s.py[i]);
        t.leader = true;
        t.line = {s.px[i] + (ex - s.px[i]) * ring / len, s.py[i] + (ey - s.py[i]) * ring / len, ex, ey};
      }
      if (tag_fits(s, placed, t, d, far)) return t;
    }
  }
  return std::nullopt;
}

// The pick first, then the other roles, the frontier points left to right, then the rest by number.
std::vector<Tag> place_tags(const Scene& s, const Drawn& d) {
  std::vector<size_t> order(d.pts.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = i;
  auto rank = [&](size_t i) { return has_role(d.pts[i].role, "pick") ? 0 : !d.pts[i].role.empty() ? 1 : d.on_frontier[i] ? 2 : 3; };
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return std::tuple(rank(a), rank(a) == 2 ? s.px[a] : 0.0, d.number[a]) < std::tuple(rank(b), rank(b) == 2 ? s.px[b] : 0.0, d.number[b]);
  });
  std::vector<Tag> tags;
  for (size_t i : order) {
    auto t = place_tag(s, tags, i, d, false);
    if (!t && rank(i) <= 2) t = place_tag(s, tags, i, d, true);  // the frontier and the roles are always named
    if (t) tags.push_back(*t);
  }
  return tags;
}

std::string header(const Chart& c, const PageLayout& L) {
  std::string s = fmt::format(
      "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
      "<svg xmlns=\"http://www.w3.org/2000/svg\" version=\"1.1\" width=\"{0}\" height=\"{1}\" viewBox=\"0 0 {0} {1}\" "
      "font-family=\"DejaVu Sans, Verdana, sans-serif\" font-size=\"12\">\n"
      "<title>{2}</title>\n<rect x=\"0\" y=\"0\" width=\"{0}\" height=\"{1}\" fill=\"white\"/>\n"
      "<text x=\"{3}\" y=\"28\" font-size=\"16\" text-anchor=\"middle\">{2}</text>\n",
      L.W, L.H, html_escape(c.title), L.W / 2);
  for (size_t i = 0; i < L.subtitle.size(); ++i)
    s += fmt::format("<text class=\"prices\" x=\"{}\" y=\"{}\" text-anchor=\"middle\" fill=\"#555\">{}</text>\n", L.W / 2, 48 + kRowH * i,
                     html_escape(L.subtitle[i]));
  return s;
}

std::string axes(const Chart& c, const Axis& ax, const Axis& ay, const PageLayout& L) {
  auto X = [&](double v) { return ax.map(v, L.left, L.plot_right()); };
  auto Y = [&](double v) { return ay.map(v, L.bottom, L.top); };
  std::string s = fmt::format("<g class=\"axes\" stroke=\"#444\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\"/>\n<line x1=\"{0}\" y1=\"{3}\" x2=\"{0}\" y2=\"{1}\"/>\n</g>\n",
                              L.left, L.bottom, L.plot_right(), L.top);
  s += "<g class=\"ticks\" fill=\"#444\">\n";
  for (double t : ax.ticks())
    s += fmt::format("<line x1=\"{0:.1f}\" y1=\"{1}\" x2=\"{0:.1f}\" y2=\"{2}\" stroke=\"#e4e4e4\"/><text x=\"{0:.1f}\" y=\"{3}\" text-anchor=\"middle\">{4}</text>\n",
                     X(t), L.bottom, L.top, L.bottom + 18, tick_text(t));
  for (double t : ay.ticks())
    s += fmt::format("<line x1=\"{0}\" y1=\"{1:.1f}\" x2=\"{2}\" y2=\"{1:.1f}\" stroke=\"#e4e4e4\"/><text x=\"{3}\" y=\"{4:.1f}\" text-anchor=\"end\">{5}</text>\n",
                     L.left, Y(t), L.plot_right(), L.left - 6, Y(t) + 4, tick_text(t));
  s += "</g>\n";
  s += fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{}{}</text>\n", (L.left + L.plot_right()) / 2, L.bottom + 40,
                   html_escape(c.x_label), ax.log ? " (log scale)" : "");
  s += fmt::format("<text x=\"20\" y=\"{0}\" text-anchor=\"middle\" transform=\"rotate(-90 20 {0})\">{1}{2}</text>\n", (L.top + L.bottom) / 2,
                   html_escape(c.y_label), ay.log ? " (log scale)" : "");
  return s;
}

std::string pick_ring(double x, double y) {
  return fmt::format("<circle class=\"pick\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"9\" fill=\"none\" stroke=\"{}\" stroke-width=\"3\"/>\n", x, y, kPickColour);
}

std::string tags_svg(const std::vector<Tag>& tags, const Scene& s, const Drawn& d) {
  std::string out = "<g class=\"point-labels\">\n";
  for (const auto& t : tags) {
    const auto& p = d.pts[t.point];
    const bool pick = has_role(p.role, "pick");
    if (t.leader)
      out += fmt::format("<line class=\"leader\" x1=\"{:.1f}\" y1=\"{:.1f}\" x2=\"{:.1f}\" y2=\"{:.1f}\" stroke=\"#999\" stroke-width=\"0.8\"/>", t.line.x0,
                         t.line.y0, t.line.x1, t.line.y1);
    out += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" text-anchor=\"middle\" fill=\"{}\"{} data-point=\"{:.1f},{:.1f}\">{}</text>\n",
                       (t.box.x0 + t.box.x1) / 2, (t.box.y0 + t.box.y1) / 2 + 4.5, pick ? kPickColour : series_colour(p.series),
                       pick ? " font-weight=\"bold\"" : "", s.px[t.point], s.py[t.point], t.text);
  }
  return out + "</g>\n";
}

std::string legend_svg(const std::vector<LegendItem>& items, const PageLayout& L) {
  if (items.empty()) return "";
  std::string s = "<g class=\"legend\">\n";
  for (const auto& it : items) {
    if (it.kind == LegendItem::kPick)
      s += pick_ring(it.x, it.y);
    else if (it.kind == LegendItem::kFrontier)
      s += fmt::format("<line x1=\"{}\" y1=\"{}\" x2=\"{}\" y2=\"{}\" stroke=\"#555\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\"/>", it.x - 10, it.y, it.x + 10, it.y);
    else
      s += fmt::format("<circle cx=\"{}\" cy=\"{}\" r=\"5\" fill=\"{}\"/>", it.x, it.y, it.colour);
    s += fmt::format("<text class=\"legend-item\" x=\"{}\" y=\"{}\"{}>{}</text>\n", it.x + 16, it.y + 4,
                     it.kind == LegendItem::kSeries ? " data-series=\"" + html_escape(it.text) + "\"" : std::string(), html_escape(it.text));
  }
  (void)L;
  return s + "</g>\n";
}

std::string key_svg(const KeyTable& k, const PageLayout& L) {
  std::string s = fmt::format("<g class=\"key\">\n<line x1=\"{0}\" y1=\"{1}\" x2=\"{2}\" y2=\"{1}\" stroke=\"#ccc\"/>\n", L.left, L.key_y + 5,
                              L.left + k.width);
  auto row = [&](const std::vector<std::string>& cells, double y, bool head, bool pick) {
    for (size_t c = 0; c < cells.size(); ++c) {
      if (cells[c].empty()) continue;
      const std::string fill = pick && (c == 0 || c + 1 == cells.size()) ? kPickColour : k.colour[c].empty() ? "#222" : k.colour[c];
      s += fmt::format("<text x=\"{:.1f}\" y=\"{:.1f}\" fill=\"{}\"{}>{}</text>", L.left + k.col_x[c], y, head ? "#444" : fill,
                       head ? " font-style=\"italic\"" : "", html_escape(cells[c]));
    }
    s += "\n";
  };
  row(k.header, L.key_y, true, false);
  for (size_t r = 0; r < k.rows.size(); ++r) row(k.rows[r], L.key_y + kRowH * static_cast<double>(r + 1) + 4, false, k.pick_row[r]);
  return s + "</g>\n";
}

std::string frontiers_svg(const Drawn& d, const Scene& s) {
  std::string out;
  for (size_t k = 0; k < d.series.size(); ++k) {
    if (d.frontiers[k].size() < 2) continue;  // one point is no line: not drawn, not in the legend
    std::string poly;
    for (size_t i : d.frontiers[k]) poly += fmt::format("{}{:.1f},{:.1f}", poly.empty() ? "" : " ", s.px[i], s.py[i]);
    out += fmt::format("<polyline class=\"pareto\" data-series=\"{}\" points=\"{}\" fill=\"none\" stroke=\"{}\" stroke-width=\"1.5\" stroke-dasharray=\"5,3\"/>\n",
                       html_escape(d.series[k]), poly, series_colour(d.series[k]));
  }
  return out;
}

std::string points_svg(const Drawn& d, const Scene& s) {
  std::string out = "<g class=\"points\">\n";
  for (size_t i = 0; i < d.pts.size(); ++i) {
    const auto& p = d.pts[i];
    out += fmt::format("<circle class=\"point\" data-series=\"{}\" cx=\"{:.1f}\" cy=\"{:.1f}\" r=\"4\" fill=\"{}\"><title>{}: {} ({}): {} / {}</title></circle>\n",
                       html_escape(p.series), s.px[i], s.py[i], series_colour(p.series), d.number[i], html_escape(p.label), html_escape(p.series), sig3(p.x), sig3(p.y));
  }
  for (size_t i = 0; i < d.pts.size(); ++i)
    if (has_role(d.pts[i].role, "pick")) out += pick_ring(s.px[i], s.py[i]);
  return out + "</g>\n";
}

}  // namespace

std::string render_svg(const Chart& chart) {
  const Drawn d = drawn_of(chart);
  auto items = legend_items(d);
  const KeyTable k = key_table(chart, d);
  PageLayout L = layout_for(chart, items, k);
  if (d.pts.empty()) {
    L.H = L.top + 120;
    return header(chart, L) + fmt::format("<text x=\"{}\" y=\"{}\" text-anchor=\"middle\">no priced options</text>\n</svg>\n", L.W / 2, L.top + 60);
  }
  const Axis ax = axis_for(d.pts, true), ay = axis_for(d.pts, false);
  Scene s;
  s.plot = L.plot();
  for (const auto& p : d.pts) s.px.push_back(ax.map(p.x, L.left, L.plot_right())), s.py.push_back(ay.map(p.y, L.bottom, L.top));
  for (const auto& f : d.frontiers)
    for (size_t j = 1; j < f.size(); ++j) s.lines.push_back({s.px[f[j - 1]], s.py[f[j - 1]], s.px[f[j]], s.py[f[j]]});
  return header(chart, L) + axes(chart, ax, ay, L) + frontiers_svg(d, s) + points_svg(d, s) + tags_svg(place_tags(s, d), s, d) +
         legend_svg(items, L) + key_svg(k, L) + "</svg>\n";
}

}  // namespace gpuadvisor
