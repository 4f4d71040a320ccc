// --format html: one self-contained page (no fetches) with the pick, the
// options table, the chart, the assumptions and the prices' date; refused by
// the commands that have no HTML form; and opened in a real browser
// (headless Chromium) where one is installed.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include "cli_run.hpp"
#include "gpuadvisor/report/html.hpp"
#include "test_files.hpp"

using cli_test::run;
namespace fs = std::filesystem;

namespace {

using test_files::on_path;
using test_files::slurp;
using test_files::TempDir;

size_t count(const std::string& s, const std::string& what) {
  size_t n = 0;
  for (size_t p = s.find(what); p != std::string::npos; p = s.find(what, p + 1)) ++n;
  return n;
}



// Nothing the page would fetch: no scripts, stylesheets, images, fonts or frames from anywhere.
void check_self_contained(const std::string& html) {
  CHECK_FALSE(std::regex_search(html, std::regex("(src|href)\\s*=\\s*[\"']?(https?:)?//", std::regex::icase)));
  CHECK_FALSE(std::regex_search(html, std::regex("<(script|link|img|iframe|object|embed)\\b", std::regex::icase)));
  CHECK_FALSE(std::regex_search(html, std::regex("(@import|url\\()", std::regex::icase)));
}

// A well-formed page: one document, every section closed.
void check_page(const std::string& html) {
  CHECK(html.rfind("<!DOCTYPE html>\n<html lang=\"en\">", 0) == 0);
  CHECK(count(html, "</html>") == 1);
  CHECK(count(html, "<section") == count(html, "</section>"));
  CHECK(count(html, "<table") == count(html, "</table>"));
  CHECK(count(html, "<tr") == count(html, "</tr>"));
  CHECK(html.find("<meta charset=\"utf-8\">") != std::string::npos);
  check_self_contained(html);
}


}  // namespace

TEST_CASE("html: the cost report has the pick, the options, the chart, the assumptions and the prices", "[html][cli]") {
  const std::string args = "cost --model llama-3-70b --task pretrain --tokens 200B --family p5";
  const auto r = run(args + " --format html");
  INFO(r.err);
  REQUIRE(r.code == 0);
  const std::string& html = r.out;
  check_page(html);
  const auto table = run(args);
  const std::string pick_line = table.out.substr(0, table.out.find('\n'));
  REQUIRE(pick_line.rfind("Recommended: ", 0) == 0);
  CHECK(html.find("<p class=\"pick-line\">" + gpuadvisor::html_escape(pick_line) + "</p>") != std::string::npos);
  CHECK(html.find("<dt>why</dt>") != std::string::npos);
  // One table row per CSV row, in the same order.
  const auto csv = run(args + " --format csv");
  const size_t rows = count(csv.out, "\n") - 1;
  CHECK(count(html, "<tr>") + count(html, "<tr class=\"pick\">") == rows + 1);
  CHECK(count(html, "<tr class=\"pick\">") <= 1);
  CHECK(html.find("<th class=\"num\" title=\"ranked_cost_usd\">") != std::string::npos);
  CHECK(html.find("<th class=\"num\" title=\"on_demand_expected_cost_usd\">") != std::string::npos);
  CHECK(html.find("<svg xmlns=\"http://www.w3.org/2000/svg\"") != std::string::npos);
  CHECK(html.find("<?xml") == std::string::npos);
  CHECK(html.find("<section id=\"assumptions\">") != std::string::npos);
  CHECK(html.find("prices as of ") != std::string::npos);
  CHECK(html.find("Region us-east-1") != std::string::npos);
  CHECK(html.find("<code>gpuadvisor " + args + " --format html</code>") != std::string::npos);
  CHECK(run(args + " --format html").out == html);  // the same bytes
}

TEST_CASE("html: every form of recommend and cost makes a page", "[html][cli]") {
  for (const std::string args : {"recommend --params 13B --task lora", "recommend --model llama-3-8b --task inference",
                                 "cost --model llama-3-8b --task inference --requests-per-second 2",
                                 "recommend --params 7B --task rl --prompts-per-step 64 --samples-per-prompt 4 --response-tokens 512",
                                 "cost --model llama-3-8b --task pretrain --tokens 50B --instance p5.48xlarge --count 4",
                                 "cost --instance p5.48xlarge --count 4 --hours 100"}) {
    INFO(args);
    const auto r = run(args + " --format html");
    INFO(r.err);
    REQUIRE(r.code == 0);
    check_page(r.out);
    CHECK(r.out.find("<section id=\"pick\">") != std::string::npos);
    CHECK(r.out.find("<table class=\"options\">") != std::string::npos);
    CHECK(r.out.find("prices as of ") != std::string::npos);
    CHECK(r.out.find("<svg") != std::string::npos);
  }
  // --explain goes to stderr, as with JSON: the page stays one document.
  const auto e = run("recommend --params 13B --task lora --explain --format html");
  CHECK(e.code == 0);
  CHECK(count(e.out, "<!DOCTYPE html>") == 1);
  CHECK(e.out.find("</html>\n") == e.out.size() - 8);
}

TEST_CASE("html: the gates and the comparison are in the page", "[html][cli]") {
  const std::string base = "gpuadvisor_test_html_base_" + std::to_string(getpid()) + ".json";
  const std::string args = "recommend --params 13B --task lora";
  {
    const auto b = run(args + " --format json");
    REQUIRE(b.code == 0);
    std::ofstream(base) << b.out;
  }
  const auto r = run(args + " --format html --compare-to " + base + " --fail-if-over 1 --fail-if-increase 50%");
  std::remove(base.c_str());
  CHECK(r.code == 4);  // over $1: the gate fails, as in every format
  check_page(r.out);
  CHECK(r.out.find("<section id=\"comparison\">") != std::string::npos);
  CHECK(r.out.find("pick unchanged") != std::string::npos);
  CHECK(r.out.find("<li class=\"failed\">--fail-if-over: the pick costs $") != std::string::npos);
  CHECK(r.out.find("<li class=\"passed\">--fail-if-increase: passed") != std::string::npos);
}

TEST_CASE("html: commands without an HTML form refuse it", "[html][cli]") {
  for (const std::string args : {"estimate --params 7B --instance p5.48xlarge", "catalog", "models", "validate", "prices fetch --region us-east-1", "catalog show p5.48xlarge", "calibrate"}) {
    INFO(args);
    const auto r = run("--format html " + args);
    CHECK(r.code == 2);
    CHECK(r.out.empty());
    CHECK(r.err.find("has no HTML report") != std::string::npos);
  }
  const auto bad = run("--format htm recommend --params 7B");
  CHECK(bad.code == 2);
  CHECK(bad.err.find("table, json, csv, markdown, html") != std::string::npos);
}

TEST_CASE("html: every text is escaped", "[html]") {
  gpuadvisor::HtmlReport r;
  r.title = "a <script>alert(1)</script> & \"b\"";
  r.command_line = "gpuadvisor '<x>'";
  r.pick_text = "Recommended: <b>bold</b>\n  why: 1 < 2 & 3 > 2\n";
  r.table.columns = {{"k<", "H&", true}};
  r.table.rows = {{{"<td>", std::monostate{}}}};
  r.assumptions = {"<i>"};
  r.notes = {"n<"};
  r.prices_note = "prices as of <today>";
  r.warnings = {"w>"};
  const std::string html = gpuadvisor::render_html(r);
  check_page(html);
  for (const std::string raw : {"<script>", "<b>", "<x>", "<td><td>", "<i>", "n<", "<today>", "w>", "k<", "H&<"}) {
    INFO(raw);
    CHECK(html.find(raw) == std::string::npos);
  }
  CHECK(html.find("a &lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;b&quot;") != std::string::npos);
  CHECK(html.find("<dt>why</dt><dd>1 &lt; 2 &amp; 3 &gt; 2</dd>") != std::string::npos);
}

TEST_CASE("html: the report opens in a real browser (headless Chromium)", "[html][cli][browser]") {
  const std::string chromium = "/usr/bin/chromium";
  if (::access(chromium.c_str(), X_OK) != 0 || !on_path("timeout")) {
    WARN("chromium is not installed (apt-get install chromium): the page is not opened in a browser");
    return;
  }
  TempDir t("gpuadvisor_test_html");
  const auto r = run("cost --model llama-3-70b --task pretrain --tokens 200B --family p5 --format html");
  REQUIRE(r.code == 0);
  const std::string page = t.file("report.html"), png = t.file("report.png"), log = t.file("chromium.log");
  std::ofstream(page, std::ios::binary) << r.out;
  const std::string common = "timeout 90 " + chromium + " --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" + t.file("profile") +
                             " --window-size=1200,1600 ";
  const int shot = std::system((common + "--screenshot=" + png + " file://" + page + " 2>" + log).c_str());
  INFO(slurp(log));
  CHECK(shot == 0);
  REQUIRE(fs::exists(png));
  const std::string bytes = slurp(png);
  CHECK(bytes.rfind("\x89PNG", 0) == 0);
  CHECK(bytes.size() > 30000);  // a blank 1200 x 1600 page compresses to a few KB
  // The DOM the browser built: the pick, the table and the chart are in it.
  FILE* p = popen((common + "--dump-dom file://" + page + " 2>" + log).c_str(), "r");
  REQUIRE(p);
  std::string dom;
  char buf[4096];
  for (size_t got; (got = fread(buf, 1, sizeof buf, p)) > 0;) dom.append(buf, got);
  CHECK(pclose(p) == 0);
  CHECK(dom.find("Recommended: ") != std::string::npos);
  CHECK(dom.find("<table class=\"options\">") != std::string::npos);
  CHECK(dom.find("<svg") != std::string::npos);
}
