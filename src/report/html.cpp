// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
#include "gpuadvisor/report/html.hpp"

#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "gpuadvisor/base/quantity.hpp"

namespace gpuadvisor {

using nlohmann::ordered_json;

std::string html_escape(std::string_view s) {
  std::string o;
  o.reserve(s.size());
  for (char c : s) {
    switch (c) {
      case '&': o += "&amp;"; break;
      case '<': o += "&lt;"; break;
      case '>': o += "&gt;"; break;
      case '"': o += "&quot;"; break;
      case '\'': o += "&#39;"; break;
      default: o.push_back(c);
    }
  }
  return o;
}

std::string html_table(const Table& t, bool wide, int* hidden) {
  std::vector<size_t> shown;
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (!t.columns[c].data_only && (wide || !t.columns[c].wide_only)) shown.push_back(c);
  if (hidden) *hidden = static_cast<int>(t.columns.size() - shown.size());
  size_t pick_col = t.columns.size();
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (t.columns[c].key == "pick") pick_col = c;
  std::string out = "<table class=\"options\">\n<thead><tr>";
  for (size_t c : shown)
    out += fmt::format("<th{} title=\"{}\">{}</th>", t.columns[c].right_align ? " class=\"num\"" : "", html_escape(t.columns[c].key),
                       html_escape(t.columns[c].header));
  out += "</tr></thead>\n<tbody>\n";
  for (const auto& r : t.rows) {
    const bool pick = pick_col < r.size() && std::holds_alternative<bool>(r[pick_col].value) && std::get<bool>(r[pick_col].value);
    out += pick ? "<tr class=\"pick\">" : "<tr>";
    for (size_t c : shown) out += fmt::format("<td{}>{}</td>", t.columns[c].right_align ? " class=\"num\"" : "", html_escape(r[c].text));
    out += "</tr>\n";
  }
  return out + "</tbody>\n</table>\n";
}

namespace {

constexpr const char* kStyle = R"(body{font-family:"DejaVu Sans",Verdana,Arial,sans-serif;color:#222;margin:2em auto;max-width:1150px;padding:0 1em;line-height:1.4}
h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:1.6em}
code,pre{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.85em}
.command{color:#555}.pick-line{font-size:1.15em;font-weight:bold}
dl.why{display:grid;grid-template-columns:max-content auto;gap:.2em 1em;margin:.5em 0}dl.why dt{color:#555}dl.why dd{margin:0}
.scroll{overflow-x:auto}table.options{border-collapse:collapse;font-size:.85em;white-space:nowrap}
table.options th,table.options td{border:1px solid #ddd;padding:.25em .5em;text-align:left}
table.options th{background:#f3f3f3}table.options .num{text-align:right}table.options tr.pick td{background:#fdeaf4;font-weight:bold}
figure{margin:0;overflow-x:auto}figure svg{max-width:100%;height:auto}
ul.gates li.passed{color:#1a7f37}ul.gates li.failed{color:#b00020;font-weight:bold}
.warning{color:#9a5b00}pre.rejections{white-space:pre-wrap;color:#444}footer{margin-top:2em;color:#777;font-size:.85em})";

// The pick text: its first line a headline, its "  key: value" lines a definition list.
std::string pick_html(const std::string& text) {
  std::string out, items;
  auto flush = [&] {
    if (!items.empty()) out += "<dl class=\"why\">\n" + items + "</dl>\n";
    items.clear();
  };
  for (size_t b = 0; b < text.size();) {
    size_t e = text.find('\n', b);
    if (e == std::string::npos) e = text.size();
    const std::string line = text.substr(b, e - b);
    b = e + 1;
    const size_t colon = line.find(": ");
    const bool item = line.rfind("  ", 0) == 0 && colon != std::string::npos && line.find_first_not_of(' ') < colon;
    if (item) {
      const size_t s = line.find_first_not_of(' ');
      const size_t v = line.find_first_not_of(' ', colon + 1);
      items += fmt::format("<dt>{}</dt><dd>{}</dd>\n", html_escape(line.substr(s, colon - s)), html_escape(v == std::string::npos ? "" : line.substr(v)));
    } else if (!line.empty()) {
      flush();
      out += fmt::format("<p class=\"pick-line\">{}</p>\n", html_escape(line));
    }
  }
  flush();
  return out;
}

std::string money_text(const ordered_json& v) { return v.is_number() ? "$" + format_thousands(v.get<double>(), 2) : std::string("unknown"); }

// The --compare-to line, as the table format words it.
std::string comparison_html(const std::string& json) {
  if (json.empty()) return "";
  const ordered_json c = ordered_json::parse(json);
  if (!c.is_object()) return "";
  const auto &b = c["base"], &n = c["current"];
  const std::string delta = !c["cost_delta_fraction"].is_number()
                                ? "cost change unknown"
                                : fmt::format("{:+.1f}% ({}{})", c["cost_delta_fraction"].get<double>() * 100,
                                              c["cost_delta_usd"].get<double>() >= 0 ? "+" : "-", money_text(std::abs(c["cost_delta_usd"].get<double>())));
  return fmt::format("<section id=\"comparison\">\n<h2>Compared with the baseline</h2>\n<p>Compared with <code>{}</code>: pick {} ({} x {} &rarr; {} x {}), "
                     "cost {} (base {}, now {}).</p>\n</section>\n",
                     html_escape(c["base_file"].get<std::string>()), c["pick_changed"].get<bool>() ? "changed" : "unchanged", b["count"].get<int>(),
                     html_escape(b["instance"].get<std::string>()), n["count"].get<int>(), html_escape(n["instance"].get<std::string>()),
                     html_escape(delta), money_text(b["cost_usd"]), money_text(n["cost_usd"]));
}

std::string gate_text(const ordered_json& g) {
  const std::string name = g["gate"].get<std::string>();
  if (!g["passed"].get<bool>()) return g["message"].get<std::string>();
  if (name == "fail_if_over") return fmt::format("--fail-if-over: passed, the pick costs {}, within the {} limit", money_text(g["cost_usd"]), money_text(g["limit_usd"]));
  return fmt::format("--fail-if-increase: passed, the cost changed {} against the {:.1f}% limit",
                     g["cost_delta_fraction"].is_number() ? fmt::format("{:+.1f}%", g["cost_delta_fraction"].get<double>() * 100) : "by an unknown amount",
                     g["limit_fraction"].get<double>() * 100);
}

std::string gates_html(const std::string& json) {
  if (json.empty()) return "";
  const ordered_json gates = ordered_json::parse(json);
  if (!gates.is_array() || gates.empty()) return "";
  std::string out = "<section id=\"gates\">\n<h2>Gates</h2>\n<ul class=\"gates\">\n";
  for (const auto& g : gates)
    out += fmt::format("<li class=\"{}\">{}</li>\n", g["passed"].get<bool>() ? "passed" : "failed", html_escape(gate_text(g)));
  return out + "</ul>\n</section>\n";
}

std::string list_html(const std::vector<std::string>& items, const char* cls) {
  std::string out = fmt::format("<ul class=\"{}\">\n", cls);
  for (const auto& x : items) out += "<li>" + html_escape(x) + "</li>\n";
  return out + "</ul>\n";
}

// The chart without its XML declaration, to sit inside the page.
std::string inline_svg(const std::string& svg) {
  const size_t at = svg.find("<svg");
  return at == std::string::npos ? "" : svg.substr(at);
}

std::string options_html(const HtmlReport& r) {
  int hidden = 0;
  std::string out = "<section id=\"options\">\n<h2>Options</h2>\n<div class=\"scroll\">\n" + html_table(r.table, r.wide, &hidden) + "</div>\n";
  if (hidden > 0) out += fmt::format("<p class=\"note\">{} more columns with <code>--wide</code>; every column with <code>--format json</code> or <code>csv</code>.</p>\n", hidden);
  for (const auto& n : r.notes) out += "<p class=\"notes\">" + html_escape(n) + "</p>\n";
  return out + "</section>\n";
}

std::string sources_html(const HtmlReport& r) {
  std::string out;
  if (!r.rejections.empty())
    out += "<section id=\"cannot-run\">\n<h2>What cannot run it</h2>\n<pre class=\"rejections\">" + html_escape(r.rejections) + "</pre>\n</section>\n";
  if (!r.assumptions.empty()) out += "<section id=\"assumptions\">\n<h2>Assumptions</h2>\n" + list_html(r.assumptions, "assumptions") + "</section>\n";
  out += fmt::format("<section id=\"prices\">\n<h2>Prices</h2>\n<p>Region {}; {}.</p>\n</section>\n", html_escape(r.region), html_escape(r.prices_note));
  if (!r.warnings.empty()) out += "<section id=\"warnings\">\n<h2>Warnings</h2>\n" + list_html(r.warnings, "warning") + "</section>\n";
  return out;
}

}  // namespace

std::string render_html(const HtmlReport& r) {
  std::string out = fmt::format(
      "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
      "<meta name=\"generator\" content=\"{0}\">\n<title>{1}</title>\n<style>\n{2}\n</style>\n</head>\n<body>\n<header>\n<h1>{1}</h1>\n"
      "<p class=\"command\"><code>{3}</code></p>\n</header>\n",
      html_escape(r.generated_by), html_escape(r.title), kStyle, html_escape(r.command_line));
  out += "<section id=\"pick\">\n<h2>The pick and why</h2>\n" + pick_html(r.pick_text) + "</section>\n";
  out += comparison_html(r.comparison_json) + gates_html(r.gates_json) + options_html(r);
  if (!r.chart_svg.empty()) out += "<section id=\"chart\">\n<h2>Time against cost</h2>\n<figure>\n" + inline_svg(r.chart_svg) + "</figure>\n</section>\n";
  out += sources_html(r);
  out += fmt::format("<footer>Made by {}.</footer>\n</body>\n</html>\n", html_escape(r.generated_by));
  return out;
}

}  // namespace gpuadvisor
