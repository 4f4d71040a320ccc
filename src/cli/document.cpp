// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
#include "document.hpp"

#include <iostream>

namespace gpuadvisor::cli {

void print_costed(CostedDocument d, const Catalog& catalog, const GlobalOptions& g, const nlohmann::ordered_json& cmp,
                  const nlohmann::ordered_json& gates) {
  const Format format = parse_format(g);
  if (format == Format::table) std::cout << d.parts.pick_text;
  if (format == Format::markdown) std::cout << markdown_text(d.parts.pick_text);
  if (format != Format::html) {
    print_comparison(cmp, gates, format);
    print_table(d.parts.table, catalog, d.parts.command, "options", g,
                format == Format::json ? with_gates(d.json_extra(), cmp, gates) : std::string());
  }
  if (d.parts.chart) write_chart(d.chart_file, *d.parts.chart, catalog);
  if (format == Format::html) print_html(std::move(d.parts), catalog, g, cmp, gates);
  if (format == Format::table) std::cout << "\n" << d.text_notes << d.text_after;
  if (format == Format::markdown) std::cout << "\n" << markdown_text(d.text_notes + d.text_after);
}

}  // namespace gpuadvisor::cli
