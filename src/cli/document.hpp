// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// The costed document recommend and cost print, in every format, from one
// set of parts: the pick in words, the comparison and gates, the table (its
// JSON fields beside the rows), the chart, the notes and the rejections.
#pragma once
#include <functional>
#include <string>

#include <nlohmann/json.hpp>

#include "html.hpp"

namespace gpuadvisor::cli {

struct CostedDocument {
  HtmlParts parts;          // what the HTML page shows; the other formats print the same parts
  std::function<std::string()> json_extra;  // the JSON document's fields beside its rows (the gates are added); built for JSON only
  std::string chart_file;   // --chart: the chart's SVG, written in every format
  std::string text_notes;   // the paragraph under the table (table and markdown)
  std::string text_after;   // what follows it there (the rejections, the notes list)
};

// Prints the document in --format's form and writes the chart.
void print_costed(CostedDocument d, const Catalog& catalog, const GlobalOptions& g, const nlohmann::ordered_json& cmp,
                  const nlohmann::ordered_json& gates);

}  // namespace gpuadvisor::cli
