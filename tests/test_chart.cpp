// The SVG chart: structure, Pareto frontier and escaping.
#include <catch2/catch.hpp>
#include <regex>

#include "gpuadvisor/chart.hpp"

using namespace gpuadvisor;

namespace {
size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}
}  // namespace

TEST_CASE("Pareto frontier of time against cost") {
  std::vector<ChartPoint> p{{"a", 1, 10, "od"}, {"b", 2, 5, "od"}, {"c", 3, 6, "od"}, {"d", 4, 1, "spot"}, {"e", 2, 5, "spot"}};
  auto f = pareto_frontier(p);
  REQUIRE(f.size() == 3);  // a, b (e is the same point), d; c is dominated by b
  CHECK(p[f[0]].label == "a");
  CHECK(p[f[1]].label == "b");
  CHECK(p[f[2]].label == "d");
}

TEST_CASE("the SVG is well formed, has a point per option and the frontier drawn and labelled") {
  Chart c;
  c.title = "7B <lora> & friends";
  c.x_label = "total time (hours)";
  c.y_label = "total cost (USD)";
  for (int i = 1; i <= 30; ++i) {
    c.points.push_back({"p5.48xlarge x " + std::to_string(i), 100.0 / i, 50.0 * std::sqrt(i), "on-demand"});
    c.points.push_back({"p5.48xlarge x " + std::to_string(i), 110.0 / i, 20.0 * std::sqrt(i), "spot"});
  }
  const std::string svg = render_svg(c);
  CHECK(svg.rfind("<?xml", 0) == 0);
  CHECK(svg.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(svg.find("</svg>") != std::string::npos);
  CHECK(count(svg, "<circle") == 60 + 2);  // points plus two legend marks
  CHECK(count(svg, "class=\"pareto\"") == 1);
  CHECK(svg.find("Pareto frontier") != std::string::npos);
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

TEST_CASE("the SVG copes with no priced options and a single point") {
  Chart empty;
  CHECK(render_svg(empty).find("no priced options") != std::string::npos);
  Chart one;
  one.points = {{"only", 5, 5, "on-demand"}};
  const std::string svg = render_svg(one);
  CHECK(svg.find("<circle") != std::string::npos);
  CHECK(svg.find("nan") == std::string::npos);
  CHECK(svg.find("inf") == std::string::npos);
}
