// The SVG chart: structure, Pareto frontiers per series, numbered points and
// their key, fixed colours, layout and escaping; then real charts from the CLI,
// checked for overlapping text, unnamed frontier points, the legend, the
// prices' date and region, and rendered to PNG with rsvg-convert.
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <nlohmann/json.hpp>
#include <cmath>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "cli_run.hpp"
#include "gpuadvisor/report/chart.hpp"
#include "test_files.hpp"

using namespace gpuadvisor;

namespace {

using test_files::on_path;
using test_files::slurp;
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}

double attr(const std::string& attrs, const std::string& name) {
  std::smatch m;
  if (!std::regex_search(attrs, m, std::regex("\\s" + name + "=\"([-0-9.e]+)\""))) return NAN;
  return std::stod(m[1]);
}

std::string str_attr(const std::string& attrs, const std::string& name) {
  std::smatch m;
  return std::regex_search(attrs, m, std::regex("\\s" + name + "=\"([^\"]*)\"")) ? m[1].str() : "";
}

// A <text> element: its estimated box (DejaVu Sans: 7.6 px a character at
// font-size 12, as wide as its digits), content and attributes.
struct Text {
  std::string attrs, content;
  double x0, x1, y0, y1;
};

std::string unescaped(std::string s) {
  for (const auto& [from, to] : {std::pair{"&lt;", "<"}, std::pair{"&gt;", ">"}, std::pair{"&quot;", "\""}, std::pair{"&amp;", "&"}})
    for (size_t p; (p = s.find(from)) != std::string::npos;) s.replace(p, std::string(from).size(), to);
  return s;
}

std::vector<Text> texts(const std::string& svg) {
  std::vector<Text> out;
  static const std::regex re("<text([^>]*)>([^<]*)</text>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) {
    const std::string a = (*it)[1], c = unescaped((*it)[2]);
    if (a.find("rotate") != std::string::npos) continue;  // the y-axis label, alone left of the ticks
    const double size = std::isnan(attr(a, "font-size")) ? 12 : attr(a, "font-size");
    const double w = size * 7.6 / 12 * static_cast<double>(c.size()), x = attr(a, "x"), y = attr(a, "y");
    const double x0 = a.find("\"middle\"") != std::string::npos ? x - w / 2 : a.find("\"end\"") != std::string::npos ? x - w : x;
    out.push_back({a, c, x0, x0 + w, y - size * 0.75 - 1, y + size * 0.25});
  }
  return out;
}

std::string group(const std::string& svg, const std::string& cls) {
  const size_t b = svg.find("<g class=\"" + cls + "\"");
  if (b == std::string::npos) return "";
  return svg.substr(b, svg.find("</g>", b) - b);
}

std::vector<Text> point_labels(const std::string& svg) { return texts(group(svg, "point-labels")); }

double svg_attr(const std::string& svg, const std::string& name) { return attr(svg.substr(svg.find("<svg"), 300), name); }

// Every polyline vertex ("x,y" as written).
std::vector<std::string> frontier_vertices(const std::string& svg) {
  std::vector<std::string> v;
  static const std::regex re("class=\"pareto\" data-series=\"[^\"]*\" points=\"([^\"]*)\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) {
    std::istringstream in((*it)[1].str());
    for (std::string p; in >> p;) v.push_back(p);
  }
  return v;
}

// The frontier segments, to check that no text lies on one.
struct Seg {
  double x0, y0, x1, y1;
};
std::vector<Seg> frontier_segments(const std::string& svg) {
  std::vector<Seg> out;
  static const std::regex re("class=\"pareto\" data-series=\"[^\"]*\" points=\"([^\"]*)\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) {
    std::istringstream in((*it)[1].str());
    std::vector<std::pair<double, double>> pts;
    for (std::string p; in >> p;) pts.push_back({std::stod(p.substr(0, p.find(','))), std::stod(p.substr(p.find(',') + 1))});
    for (size_t i = 1; i < pts.size(); ++i) out.push_back({pts[i - 1].first, pts[i - 1].second, pts[i].first, pts[i].second});
  }
  return out;
}

bool segment_meets_box(const Seg& s, const Text& b) {
  for (int k = 0; k <= 200; ++k) {  // sampled: fine enough at these sizes
    const double t = k / 200.0, x = s.x0 + t * (s.x1 - s.x0), y = s.y0 + t * (s.y1 - s.y0);
    if (x > b.x0 && x < b.x1 && y > b.y0 && y < b.y1) return true;
  }
  return false;
}

bool overlap(const Text& a, const Text& b) { return a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1; }

// What a chart in a report needs: no text on another, no text on a frontier,
// every frontier point and the pick named, a legend of what is drawn only, the prices' date and the region.
void check_readable(const std::string& svg, const std::string& region) {
  const auto all = texts(svg);
  for (size_t i = 0; i < all.size(); ++i)
    for (size_t j = i + 1; j < all.size(); ++j) {
      INFO("'" << all[i].content << "' and '" << all[j].content << "'");
      CHECK_FALSE(overlap(all[i], all[j]));
    }
  for (const auto& t : point_labels(svg))
    for (const auto& s : frontier_segments(svg)) {
      INFO("label " << t.content);
      CHECK_FALSE(segment_meets_box(s, t));
    }
  std::set<std::string> named;
  for (const auto& t : point_labels(svg)) named.insert(str_attr(t.attrs, "data-point"));
  for (const auto& v : frontier_vertices(svg)) {
    INFO("frontier point " << v);
    CHECK(named.count(v) == 1);
  }
  static const std::regex ring("<circle class=\"pick\" cx=\"([^\"]+)\" cy=\"([^\"]+)\"");
  const std::string points = group(svg, "points");
  for (std::sregex_iterator it(points.begin(), points.end(), ring), end; it != end; ++it) CHECK(named.count((*it)[1].str() + "," + (*it)[2].str()) == 1);
  std::set<std::string> drawn, listed;
  static const std::regex series("<circle class=\"point\" data-series=\"([^\"]*)\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), series), end; it != end; ++it) drawn.insert((*it)[1]);
  const std::string legend = group(svg, "legend");
  static const std::regex item("class=\"legend-item\"[^>]*data-series=\"([^\"]*)\"");
  for (std::sregex_iterator it(legend.begin(), legend.end(), item), end; it != end; ++it) listed.insert((*it)[1]);
  CHECK(drawn == listed);
  CHECK((legend.find("Pareto frontier") != std::string::npos) == !frontier_vertices(svg).empty());
  CHECK((legend.find("recommended pick") != std::string::npos) == (points.find("class=\"pick\"") != std::string::npos));
  if (!region.empty()) {  // a chart from the CLI
    CHECK(svg.find("prices as of ") != std::string::npos);
    CHECK(svg.find("region " + region) != std::string::npos);
  }
  CHECK(svg.find("nan") == std::string::npos);
  const double W = svg_attr(svg, "width"), H = svg_attr(svg, "height");
  for (const auto& t : all) {
    INFO(t.content);
    CHECK((t.x0 >= 0 && t.x1 <= W && t.y0 >= 0 && t.y1 <= H));
  }
}

Chart two_series(int n) {
  Chart c;
  c.title = "7B <lora> & friends";
  c.x_label = "total time (hours)";
  c.y_label = "total cost (USD)";
  for (int i = 1; i <= n; ++i) {
    c.points.push_back({"p5.48xlarge x " + std::to_string(i), 100.0 / i, 50.0 * std::sqrt(i), "on-demand", ""});
    c.points.push_back({"p5.48xlarge x " + std::to_string(i), 110.0 / i, 20.0 * std::sqrt(i), "spot, expected with interruptions", ""});
  }
  return c;
}



// The chart a CLI run writes (its own temporary file, removed).
std::string cli_chart(const std::string& args) {
  static int n = 0;
  const std::string path = "gpuadvisor_test_chart_" + std::to_string(getpid()) + "_" + std::to_string(n++) + ".svg";
  const auto r = cli_test::run(args + " --chart " + path);
  INFO(args << "\n" << r.err);
  REQUIRE(r.code == 0);
  const std::string svg = slurp(path);
  std::remove(path.c_str());
  return svg;
}
}  // namespace

TEST_CASE("Pareto frontier of time against cost", "[chart]") {
  std::vector<ChartPoint> p{{"a", 1, 10, "od", ""}, {"b", 2, 5, "od", ""}, {"c", 3, 6, "od", ""}, {"d", 4, 1, "spot", ""}, {"e", 2, 5, "spot", ""}};
  auto f = pareto_frontier(p);
  REQUIRE(f.size() == 3);  // a, b (e is the same point), d; c is dominated by b
  CHECK(p[f[0]].label == "a");
  CHECK(p[f[1]].label == "b");
  CHECK(p[f[2]].label == "d");
}

TEST_CASE("a Pareto frontier per series: a spot point dominated only by on-demand stays on the spot frontier", "[chart]") {
  std::vector<ChartPoint> p{{"od-fast", 1, 5, "on-demand", ""}, {"od-cheap", 3, 4, "on-demand", ""}, {"spot-slow", 2, 6, "spot", ""},
                            {"spot-slower", 3, 7, "spot", ""}, {"spot-cheap", 4, 1, "spot", ""}};
  const auto all = pareto_frontier(p);
  CHECK(std::find(all.begin(), all.end(), size_t{2}) == all.end());  // dominated by od-fast
  CHECK(pareto_frontier(p, "spot") == std::vector<size_t>{2, 4});      // spot-slower is dominated by spot-slow
  CHECK(pareto_frontier(p, "on-demand") == std::vector<size_t>{0, 1});
  CHECK(pareto_frontier(p, "none").empty());
  Chart c;
  c.points = p;
  const std::string svg = render_svg(c);
  CHECK(count(svg, "class=\"pareto\"") == 2);
  // Each frontier is drawn in its series' colour; the spot one joins spot-slow and spot-cheap.
  std::vector<std::string> at;
  static const std::regex circle("<circle class=\"point\" data-series=\"[^\"]*\" cx=\"([^\"]+)\" cy=\"([^\"]+)\" r=\"4\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it) at.push_back((*it)[1].str() + "," + (*it)[2].str());
  REQUIRE(at.size() == 5);
  CHECK(count(svg, "data-series=\"spot\" points=\"" + at[2] + " " + at[4] + "\" fill=\"none\" stroke=\"" + series_colour("spot") + "\"") == 1);
  CHECK(std::regex_search(svg, std::regex("class=\"pareto\" data-series=\"on-demand\" points=\"[^\"]*\" fill=\"none\" stroke=\"#1f77b4\"")));
}

TEST_CASE("a series has one colour in every chart, whatever else is drawn", "[chart]") {
  CHECK(series_colour("on-demand") == "#1f77b4");
  const std::set<std::string> known{series_colour("on-demand"), series_colour("spot, expected with interruptions"),
                                    series_colour("spot, no interruptions")};
  CHECK(known.size() == 3);
  CHECK(known.count(series_colour("capacity block")) == 0);  // another name: none of theirs
  CHECK(series_colour("capacity block") == series_colour("capacity block"));
  // The same series in two charts of different series sets: the same colour on the frontier and the points.
  Chart a, b;
  a.points = {{"x", 1, 2, "spot, no interruptions", ""}, {"y", 2, 1, "spot, no interruptions", ""}};
  b.points = {{"x", 1, 2, "on-demand", ""}, {"z", 3, 1, "spot, expected with interruptions", ""}, {"x", 1, 1.5, "spot, no interruptions", ""},
              {"y", 2, 1, "spot, no interruptions", ""}};
  const std::string green = "fill=\"" + series_colour("spot, no interruptions") + "\"";
  for (const auto& svg : {render_svg(a), render_svg(b)})
    CHECK(std::regex_search(svg, std::regex("data-series=\"spot, no interruptions\" cx=\"[^\"]+\" cy=\"[^\"]+\" r=\"4\" " + green)));
}

TEST_CASE("roles: several joined with commas", "[chart]") {
  CHECK(has_role("pick", "pick"));
  CHECK(has_role("pick, cheapest", "cheapest"));
  CHECK(has_role("cheapest,pick", "pick"));
  CHECK_FALSE(has_role("pick, cheapest", "pic"));
  CHECK_FALSE(has_role("pick, cheapest", "fastest"));
  CHECK_FALSE(has_role("", "pick"));
}

TEST_CASE("the SVG is well formed, has a point per option and a frontier per series", "[chart]") {
  const Chart c = two_series(30);
  const std::string svg = render_svg(c);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "<circle") == 60 + 2);  // points plus two legend marks; no pick, no ring
  CHECK(count(svg, "class=\"pareto\"") == 2);
  CHECK(svg.find("Pareto frontier") != std::string::npos);
  CHECK(svg.find("recommended pick") == std::string::npos);
  CHECK(svg.find("7B &lt;lora&gt; &amp; friends") != std::string::npos);  // escaped
  CHECK(svg.find("<lora>") == std::string::npos);
  CHECK(svg.find("total time (hours) (log scale)") != std::string::npos);  // 3.3 to 110 h: a factor over 20
  CHECK(svg.find("total cost (USD) (log scale)") == std::string::npos);    // 20 to 274: linear
  // Every opened element is closed (no stray '<' in text).
  CHECK(count(svg, "<text") == count(svg, "</text>"));
  CHECK(count(svg, "<g ") == count(svg, "</g>"));
  CHECK(svg.find("nan") == std::string::npos);
  // Deterministic.
  CHECK(render_svg(c) == svg);
}

TEST_CASE("every option has a number on the plot and a row in the key, one number for its points under each pricing", "[chart]") {
  Chart c = two_series(10);
  c.x_unit = "h";
  c.y_unit = "USD";
  c.points.push_back({"alpha-node x 1", 30, 100, "spot, expected with interruptions", ""});
  c.points.push_back({"bravo-node x 2", 40, 90, "spot, expected with interruptions", "pick, cheapest"});
  c.points.push_back({"charlie-node x 3", 5, 300, "on-demand", "fastest"});
  const std::string svg = render_svg(c);
  const auto key = texts(group(svg, "key"));
  auto keyed = [&](const std::string& what) { return std::count_if(key.begin(), key.end(), [&](const Text& t) { return t.content == what; }); };
  CHECK(keyed("p5.48xlarge x 1") == 1);  // one row for its two points
  CHECK(keyed("bravo-node x 2") == 1);
  CHECK(keyed("pick, cheapest") == 1);
  CHECK(keyed("fastest") == 1);
  CHECK(keyed("100 h, $50.00") == 1);  // p5.48xlarge x 1 on-demand
  CHECK(keyed("13") == 1);             // options 1 to 10, then alpha 11, bravo 12, charlie 13
  // Numbered on the plot: every point that has room; bravo (12, the pick) and its frontier.
  const auto tags = point_labels(svg);
  CHECK(std::count_if(tags.begin(), tags.end(), [](const Text& t) { return t.content == "12"; }) == 1);
  CHECK(tags.size() >= 20);
  CHECK(count(svg, "class=\"pick\"") == 2);  // the ring on the point and in the legend
  CHECK(count(svg, ">recommended pick</text>") == 1);
  check_readable(render_svg(c), "");
  CHECK(render_svg(c) == svg);
}

TEST_CASE("the legend and every text lie inside the SVG, even with a long series name", "[chart]") {
  Chart c = two_series(8);
  std::string longname = "spot, expected with interruptions";
  while (longname.size() < 140) longname += ", and more";
  c.points.push_back({"x", 50, 60, longname, "pick"});
  c.points.push_back({"far right", 100, 400, "spot, expected with interruptions", "fastest"});
  const std::string svg = render_svg(c);
  const double W = svg_attr(svg, "width"), H = svg_attr(svg, "height");
  CHECK(W >= 7.6 * longname.size());
  for (const auto& t : texts(svg)) {
    INFO(t.content);
    CHECK(t.x0 >= 0);
    CHECK(t.x1 <= W);
    CHECK(t.y0 >= 0);
    CHECK(t.y1 <= H);
  }
}

TEST_CASE("numbers of points at nearly the same place do not overlap and stay in the plot", "[chart]") {
  for (double x : {1.0, 100.0}) {  // at the left and at the right edge of the plot
    Chart c = two_series(10);
    c.points.push_back({"p4d.24xlarge x 1", x, 100, "on-demand", "pick"});
    c.points.push_back({"p4d.24xlarge x 2", x * 1.001, 100.1, "on-demand", "cheapest"});
    c.points.push_back({"p4d.24xlarge x 3", x * 1.002, 100.2, "spot, expected with interruptions", "fastest"});
    const std::string svg = render_svg(c);
    const auto ls = point_labels(svg);
    for (const std::string n : {"11", "12", "13"})
      CHECK(std::count_if(ls.begin(), ls.end(), [&](const Text& t) { return t.content == n; }) == 1);
    for (const auto& l : ls) {
      CHECK(l.x0 >= 90);                          // right of the y axis
      CHECK(l.x1 <= svg_attr(svg, "width") - 30);  // left of the plot's right edge
    }
    check_readable(svg, "");
  }
}

TEST_CASE("a linear axis starts at zero: a 3% spread looks like 3%", "[chart]") {
  Chart c;
  c.points = {{"a x 4", 100, 1000, "on-demand", "pick"}, {"a x 4", 100, 970, "spot, expected with interruptions", ""}};
  const std::string svg = render_svg(c);
  std::vector<double> ys;
  static const std::regex circle("<circle class=\"point\" data-series=\"[^\"]*\" cx=\"[^\"]+\" cy=\"([^\"]+)\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it) ys.push_back(std::stod((*it)[1]));
  REQUIRE(ys.size() == 2);
  CHECK(std::abs(ys[0] - ys[1]) < 0.05 * 420);  // a few pixels of a 420 px plot, not all of it
  CHECK(svg.find(">0</text>") != std::string::npos);
  // One point a series: no frontier line, and none in the legend.
  CHECK(svg.find("class=\"pareto\"") == std::string::npos);
  CHECK(svg.find("Pareto frontier") == std::string::npos);
}

TEST_CASE("the SVG copes with no priced options and a single point", "[chart]") {
  Chart empty;
  CHECK(render_svg(empty).find("no priced options") != std::string::npos);
  Chart one;
  one.points = {{"only", 5, 5, "on-demand", "pick"}};
  one.region = "us-east-1";
  one.prices_note = "prices as of 2026-11-29, embedded snapshot";
  const std::string svg = render_svg(one);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(svg.find(">only</text>") != std::string::npos);
  CHECK(svg.find("region us-east-1; prices as of 2026-11-29, embedded snapshot") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
}

TEST_CASE("charts from the CLI are fit for a report: training, a frontier of counts, serving, a given run", "[chart][cli]") {
  struct Case {
    std::string args, x_label;
  };
  const std::vector<Case> cases{
      {"recommend --params 13B --task lora", "total time (hours)"},
      {"recommend --params 13B --task lora --all-counts", "total time (hours)"},  // 352 points: crowded, the frontier still named
      {"cost --model llama-3-70b --task pretrain --tokens 200B --family p5", "total time (hours)"},
      {"cost --model llama-3-70b --task pretrain --tokens 200B --family p5 --all-counts", "total time (hours)"},
      {"cost --model llama-3-8b --task inference --requests-per-second 2", "time per output token at the load (ms)"},
      {"recommend --model llama-3-8b --task inference", "time per output token at the load (ms)"},
      {"cost --model llama-3-8b --task pretrain --tokens 50B --instance p5.48xlarge --count 4", "total time (hours)"},
      {"cost --model llama-3-8b --task pretrain --tokens 50B --instance p5.48xlarge --count 4 --hours 100", "total time (hours)"},
      {"cost --instance p5.48xlarge --count 4 --hours 100", "total time (hours)"}};
  for (const auto& c : cases) {
    INFO(c.args);
    const std::string svg = cli_chart(c.args);
    check_readable(svg, "us-east-1");
    CHECK(svg.find(c.x_label) != std::string::npos);
    CHECK(svg.find("embedded snapshot") != std::string::npos);
    CHECK(svg == cli_chart(c.args));  // the same bytes
  }
  // Serving in milliseconds: no tick or key entry reads like 0.014 s.
  const std::string serving = cli_chart("cost --model llama-3-8b --task inference --requests-per-second 2");
  CHECK(serving.find(" ms, $") != std::string::npos);
  CHECK(serving.find("(s)") == std::string::npos);
}

TEST_CASE("charts from the CLI render to PNG with rsvg-convert", "[chart][cli]") {
  if (!on_path("rsvg-convert")) {
    WARN("rsvg-convert is not installed (apt-get install librsvg2-bin): the PNG rendering is not checked");
    return;
  }
  const std::string base = "gpuadvisor_test_render_" + std::to_string(getpid());
  int n = 0;
  for (const std::string args : {"recommend --params 13B --task lora", "cost --model llama-3-8b --task inference --requests-per-second 2"}) {
    INFO(args);
    const std::string svg = base + "_" + std::to_string(n) + ".svg", png = base + "_" + std::to_string(n++) + ".png";
    {
      std::ofstream(svg, std::ios::binary) << cli_chart(args);
    }
    const int rc = std::system(("rsvg-convert -o " + png + " " + svg).c_str());
    CHECK(rc == 0);
    const std::string bytes = slurp(png);
    CHECK(bytes.size() > 10000);
    CHECK(bytes.rfind("\x89PNG", 0) == 0);
    std::remove(svg.c_str());
    std::remove(png.c_str());
  }
}

TEST_CASE("a pick bought in Capacity Blocks is drawn at the block's price, as the table ranks it", "[chart]") {
  // The chart drew every option at on demand: the pick's ring sat at $299,403 where the table said $175,694 in blocks.
  const std::string args = "cost --params 8B --task pretrain --tokens 1T";
  const auto j = nlohmann::json::parse(cli_test::run(args + " --format json").out);
  const auto& pick = j["recommendation"];
  REQUIRE(pick["channel"] == "capacity-block");
  const std::string label = pick["instance"].get<std::string>() + " x " + std::to_string(pick["count"].get<int>());
  const std::string svg = cli_chart(args);
  const std::regex block_point("<circle class=\"point\" data-series=\"Capacity Block, whole days billed\" cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"[^>]*><title>[0-9]+: " +
                               label + " \\(Capacity Block, whole days billed\\): [0-9.,]+ / ([0-9,]+)</title>");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, block_point));
  std::string cost = m[3].str();
  cost.erase(std::remove(cost.begin(), cost.end(), ','), cost.end());
  CHECK(std::stod(cost) == Approx(pick["costs"]["ranked_usd"].get<double>()).epsilon(0.01));
  // The pick's ring is on that point.
  CHECK(svg.find("<circle class=\"pick\" cx=\"" + m[1].str() + "\" cy=\"" + m[2].str() + "\"") != std::string::npos);
}

TEST_CASE("a job's chart draws spot only as its expected cost with interruptions", "[chart]") {
  // 128 trn1.32xlarge for five weeks on spot drew a point at the no-interruption price, the chart's cheapest
  // ($465,603), though the catalog has no interruption rate for trn1 and the table says its expected cost is unknown.
  const std::string args = "cost --params 70B --task pretrain --tokens 1T";
  const std::string svg = cli_chart(args);
  CHECK(svg.find("data-series=\"spot, no interruptions\"") == std::string::npos);
  const auto j = nlohmann::json::parse(cli_test::run(args + " --format json").out);
  bool unknown_spot = false;
  for (const auto& o : j["options"])
    if (o["instance"] == "trn1.32xlarge") unknown_spot = o["spot_cost_usd"].is_number() && o["spot_expected_cost_usd"].is_null();
  CHECK(unknown_spot);  // the case the test is about: a spot price without an expected cost
  // A job with interruption rates keeps its spot points, and one ranked at spot keeps its own.
  CHECK(cli_chart("cost --model llama-3.1-8b --task lora --tokens 500M").find("data-series=\"spot, expected with interruptions\"") !=
        std::string::npos);
  // A reservation of hours has no interruption figures: its spot is drawn at the snapshot price, as its table ranks it.
  const std::string reservation = cli_chart("cost --instance trn1.32xlarge --count 4 --hours 100 --pricing spot");
  CHECK(reservation.find("data-series=\"spot, no interruptions\"") != std::string::npos);
}

TEST_CASE("a job's chart draws no option past the horizon, nor an on-demand price above the usual on-demand count", "[chart]") {
  // A finance user's trial: 1 x p3.16xlarge for 36,664 h (4.2 years) was drawn like any option, and 64 to 128
  // P instances had on-demand points though the table says that count is not had on demand.
  const std::string args = "cost --params 7B --task pretrain --tokens 1T --all-counts";
  const std::string svg = cli_chart(args);
  const auto j = nlohmann::json::parse(cli_test::run(args + " --format json").out);
  int past_horizon = 0, beyond_usual = 0;
  for (const auto& o : j["options"]) {
    const std::string label = ": " + o["instance"].get<std::string>() + " x " + std::to_string(o["count"].get<int>()) + " (";
    if (o["beyond_horizon"].get<bool>()) {
      ++past_horizon;
      CHECK(svg.find(label) == std::string::npos);
    }
    // p5.48xlarge is usually started 2 at a time on demand (data/catalog.json): its larger counts have no on-demand point.
    if (o["instance"] == "p5.48xlarge" && o["count"].get<int>() > 2) {
      ++beyond_usual;
      CHECK(svg.find(label + "on-demand)") == std::string::npos);
    }
  }
  CHECK(past_horizon > 0);
  CHECK(beyond_usual > 0);
  CHECK(svg.find(": p5.48xlarge x 2 (on-demand)") != std::string::npos);  // within the usual count it is drawn
}

TEST_CASE("a service ranked under a commitment is drawn at that price, with its ring there", "[chart]") {
  // The serving chart drew on demand and spot only: under --pricing savings-1y the pick's $/month was on no point.
  const std::string overlay = "gpuadvisor_test_chart_commit_" + std::to_string(getpid()) + ".json";
  std::ofstream(overlay) << R"({"instances": [{"name": "p6-b200.48xlarge", "prices": {"us-east-1": {"commitments": {
      "compute-savings-plan-1yr-no-upfront": {"usd_per_hour": 85.45, "as_of": "2026-11-01", "source": "TEAM"}}}}}],
      "sources": {"TEAM": {"title": "test", "url": "https://example.invalid"}}})";
  const std::string svg = cli_chart("--catalog-add " + overlay + " cost --model llama-3-70b --task inference --requests-per-second 20 --pricing savings-1y");
  std::remove(overlay.c_str());
  // 85.45 $/h x 720 h = $61,524 a month, on the 1-year series, with the pick's ring on it.
  const std::regex point("<circle class=\"point\" data-series=\"1-year savings plan\" cx=\"([0-9.]+)\" cy=\"([0-9.]+)\"[^>]*><title>[0-9]+: "
                         "p6-b200.48xlarge TP4 x 1 \\(1-year savings plan\\): [0-9.,]+ / 61,524</title>");
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, point));
  CHECK(svg.find("<circle class=\"pick\" cx=\"" + m[1].str() + "\" cy=\"" + m[2].str() + "\"") != std::string::npos);
}
