// The SVG chart: structure, Pareto frontiers per series, role labels, layout and escaping.
#include <catch2/catch.hpp>
#include <cmath>
#include <regex>

#include "gpuadvisor/chart.hpp"

using namespace gpuadvisor;

namespace {
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

// A <text> element: its estimated box (7 px a character at font-size 12), content and attributes.
struct Text {
  std::string attrs, content;
  double x0, x1, y0, y1;
};

std::vector<Text> texts(const std::string& svg) {
  std::vector<Text> out;
  static const std::regex re("<text([^>]*)>([^<]*)</text>");
  for (std::sregex_iterator it(svg.begin(), svg.end(), re), end; it != end; ++it) {
    const std::string a = (*it)[1], c = (*it)[2];
    if (a.find("rotate") != std::string::npos) continue;  // the y-axis label
    const double size = a.find("font-size=\"16\"") != std::string::npos ? 16 : 12;
    const double w = size * 7 / 12 * static_cast<double>(c.size()), x = attr(a, "x"), y = attr(a, "y");
    const double x0 = a.find("\"middle\"") != std::string::npos ? x - w / 2 : a.find("\"end\"") != std::string::npos ? x - w : x;
    out.push_back({a, c, x0, x0 + w, y - size, y + 3});
  }
  return out;
}

std::vector<Text> point_labels(const std::string& svg) {
  const size_t b = svg.find("<g class=\"point-labels\""), e = svg.find("</g>", b);
  REQUIRE(b != std::string::npos);
  return texts(svg.substr(b, e - b));
}

double svg_attr(const std::string& svg, const std::string& name) { return attr(svg.substr(svg.find("<svg"), 300), name); }

Chart two_series(int n) {
  Chart c;
  c.title = "7B <lora> & friends";
  c.x_label = "total time (hours)";
  c.y_label = "total cost (USD)";
  for (int i = 1; i <= n; ++i) {
    c.points.push_back({"p5.48xlarge x " + std::to_string(i), 100.0 / i, 50.0 * std::sqrt(i), "on-demand", ""});
    c.points.push_back({"p5.48xlarge x " + std::to_string(i), 110.0 / i, 20.0 * std::sqrt(i), "spot", ""});
  }
  return c;
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
  std::vector<ChartPoint> p{{"od-fast", 1, 5, "on-demand", ""}, {"spot-slow", 2, 6, "spot", ""}, {"spot-slower", 3, 7, "spot", ""},
                            {"spot-cheap", 4, 1, "spot", ""}};
  const auto all = pareto_frontier(p);
  CHECK(std::find(all.begin(), all.end(), size_t{1}) == all.end());  // dominated by od-fast
  CHECK(pareto_frontier(p, "spot") == std::vector<size_t>{1, 3});      // spot-slower is dominated by spot-slow
  CHECK(pareto_frontier(p, "on-demand") == std::vector<size_t>{0});
  CHECK(pareto_frontier(p, "none").empty());
  Chart c;
  c.points = p;
  const std::string svg = render_svg(c);
  CHECK(count(svg, "class=\"pareto\"") == 2);
  // Each frontier is drawn in its series' colour; the spot one joins spot-slow and spot-cheap.
  std::vector<std::string> at;
  static const std::regex circle("<circle cx=\"([^\"]+)\" cy=\"([^\"]+)\" r=\"4\"");
  for (std::sregex_iterator it(svg.begin(), svg.end(), circle), end; it != end; ++it) at.push_back((*it)[1].str() + "," + (*it)[2].str());
  REQUIRE(at.size() == 4);
  CHECK(count(svg, "data-series=\"spot\" points=\"" + at[1] + " " + at[3] + "\" fill=\"none\" stroke=\"#d62728\"") == 1);
  CHECK(std::regex_search(svg, std::regex("class=\"pareto\" data-series=\"on-demand\" points=\"[^\"]*\" fill=\"none\" stroke=\"#1f77b4\"")));
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
  CHECK(point_labels(svg).empty());                                         // no roles, no labels
  // Every opened element is closed (no stray '<' in text).
  CHECK(count(svg, "<text") == count(svg, "</text>"));
  CHECK(count(svg, "<g ") == count(svg, "</g>"));
  CHECK(svg.find("nan") == std::string::npos);
  // Deterministic.
  CHECK(render_svg(c) == svg);
}

TEST_CASE("only the points with a role are labelled, and the pick is marked and in the legend", "[chart]") {
  Chart c = two_series(10);
  c.points.push_back({"alpha-node x 1", 30, 100, "spot", ""});
  c.points.push_back({"bravo-node x 2", 40, 90, "spot", "pick, cheapest"});
  c.points.push_back({"charlie-node x 3", 5, 300, "on-demand", "fastest"});
  const std::string svg = render_svg(c);
  const auto labels = point_labels(svg);
  REQUIRE(labels.size() == 2);
  for (const auto& t : texts(svg)) CHECK(t.content.find("alpha-node") == std::string::npos);
  for (const auto& t : texts(svg)) CHECK(t.content.find("p5.48xlarge") == std::string::npos);
  CHECK(count(svg, ">pick, cheapest: bravo-node x 2</text>") == 1);
  CHECK(count(svg, ">fastest: charlie-node x 3</text>") == 1);
  CHECK(count(svg, "class=\"pick\"") == 2);  // the ring on the point and in the legend
  CHECK(count(svg, ">recommended pick</text>") == 1);
  CHECK(render_svg(c) == svg);
}

TEST_CASE("the legend and every text lie inside the SVG, even with a long series name", "[chart]") {
  Chart c = two_series(8);
  std::string longname = "spot, expected with interruptions";
  while (longname.size() < 140) longname += ", and more";
  c.points.push_back({"x", 50, 60, longname, "pick"});
  c.points.push_back({"far right", 100, 400, "spot", "fastest"});
  const std::string svg = render_svg(c);
  const double W = svg_attr(svg, "width"), H = svg_attr(svg, "height");
  CHECK(W >= 7 * longname.size());
  std::smatch m;
  REQUIRE(std::regex_search(svg, m, std::regex("<rect class=\"legend-box\"([^>]*)>")));
  CHECK(attr(m[1], "x") >= 0);
  CHECK(attr(m[1], "x") + attr(m[1], "width") <= W);
  CHECK(attr(m[1], "y") + attr(m[1], "height") <= H);
  for (const auto& t : texts(svg)) {
    INFO(t.content);
    CHECK(t.x0 >= 0);
    CHECK(t.x1 <= W);
    CHECK(t.y0 >= 0);
    CHECK(t.y1 <= H);
  }
}

TEST_CASE("labels of three role points at nearly the same place do not overlap and stay in the plot", "[chart]") {
  for (double x : {1.0, 100.0}) {  // at the left and at the right edge of the plot
    Chart c = two_series(10);
    c.points.push_back({"p4d.24xlarge x 1", x, 100, "on-demand", "pick"});
    c.points.push_back({"p4d.24xlarge x 2", x * 1.001, 100.1, "on-demand", "cheapest"});
    c.points.push_back({"p4d.24xlarge x 3", x * 1.002, 100.2, "spot", "fastest"});
    const std::string svg = render_svg(c);
    const auto ls = point_labels(svg);
    REQUIRE(ls.size() == 3);
    for (size_t i = 0; i < ls.size(); ++i) {
      CHECK(ls[i].x0 >= 90);                          // right of the y axis
      CHECK(ls[i].x1 <= svg_attr(svg, "width") - 30);  // left of the plot's right edge
      for (size_t j = i + 1; j < ls.size(); ++j) {
        INFO(ls[i].content << " / " << ls[j].content);
        const bool apart = ls[i].x1 <= ls[j].x0 || ls[j].x1 <= ls[i].x0 || std::abs(attr(ls[i].attrs, "y") - attr(ls[j].attrs, "y")) >= 14;
        CHECK(apart);
      }
    }
  }
}

TEST_CASE("the SVG copes with no priced options and a single point", "[chart]") {
  Chart empty;
  CHECK(render_svg(empty).find("no priced options") != std::string::npos);
  Chart one;
  one.points = {{"only", 5, 5, "on-demand", "pick"}};
  const std::string svg = render_svg(one);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(svg.find("pick: only") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
}
