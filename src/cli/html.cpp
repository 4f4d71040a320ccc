// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
#include "html.hpp"

#include <iostream>

#include "gpuadvisor/report/html.hpp"
#include "gpuadvisor/base/json_text.hpp"

namespace gpuadvisor::cli {

void print_html(HtmlParts parts, const Catalog& catalog, const GlobalOptions& g, const nlohmann::ordered_json& cmp,
                const nlohmann::ordered_json& gates) {
  HtmlReport r;
  r.title = fmt::format("gpuadvisor {}: {}", parts.command, parts.job);
  r.command_line = g.command_line;
  r.generated_by = fmt::format("gpuadvisor {}, catalog {}", tool_version(), catalog.catalog_version);
  r.pick_text = std::move(parts.pick_text);
  r.comparison_json = cmp.is_null() ? "" : json_text(cmp);
  r.gates_json = gates.is_array() ? json_text(gates) : "";
  r.table = std::move(parts.table);
  r.wide = g.wide;
  if (parts.chart) {
    parts.chart->prices_note = prices_note(catalog);
    r.chart_svg = render_svg(*parts.chart);
  }
  r.notes = std::move(parts.notes);
  r.rejections = std::move(parts.rejections);
  r.assumptions = std::move(parts.assumptions);
  r.region = std::move(parts.region);
  r.prices_note = prices_note(catalog);
  r.warnings = warnings();
  std::cout << render_html(r);
}

std::vector<std::string> joined(const std::vector<std::string>& a, const std::vector<std::string>& b) {
  std::vector<std::string> out = a;
  out.insert(out.end(), b.begin(), b.end());
  return out;
}

}  // namespace gpuadvisor::cli
