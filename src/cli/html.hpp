// Layer cli: flags, one file per command: declare flags, build the request, call the library, render; the top layer.
// `--format html` for recommend and cost: the parts a command hands over, and
// the page printed from them (src/report/html.cpp renders it).
#pragma once
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "cli.hpp"

namespace gpuadvisor::cli {

struct HtmlParts {
  std::string command;    // "recommend", "cost"
  std::string job;        // "llama-3-70b pretrain"
  std::string pick_text;  // render_pick_text / render_serving_pick_text
  Table table;
  std::optional<Chart> chart;  // inline, as --chart writes it
  std::vector<std::string> assumptions;
  std::string region;
  std::vector<std::string> notes;  // the paragraphs under the table
  std::string rejections;  // render_rejections_text
};

// Prints the whole page: the parts, the comparison and gates, the prices' date and source, the warnings.
void print_html(HtmlParts parts, const Catalog& catalog, const GlobalOptions& g, const nlohmann::ordered_json& cmp,
                const nlohmann::ordered_json& gates);

// a, then b (a model's and a workload's assumptions; the notes).
std::vector<std::string> joined(const std::vector<std::string>& a, const std::vector<std::string>& b);

}  // namespace gpuadvisor::cli
