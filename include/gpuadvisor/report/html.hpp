// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// `--format html`: one self-contained page per run of `recommend` or `cost`
// (docs/cli.md §HTML reports). Inline CSS and an inline SVG chart; nothing is
// fetched (no scripts, fonts, images or links to the network). Every text is
// escaped. The same inputs give the same bytes.
#pragma once
#include <string>
#include <string_view>
#include <vector>

#include "gpuadvisor/report/report.hpp"

namespace gpuadvisor {

struct HtmlReport {
  std::string title;         // "gpuadvisor cost: llama-3-70b pretrain"
  std::string command_line;  // as typed
  std::string generated_by;  // "gpuadvisor 1.2.3, catalog 2026.11"
  std::string pick_text;     // what the table format prints at its top (render_pick_text, render_serving_pick_text)
  std::string comparison_json;  // the JSON document's `comparison` (null or "" when no --compare-to)
  std::string gates_json;       // its `gates` (an array; empty when none)
  Table table;
  bool wide = false;         // every column, as --wide; else the table format's columns
  std::string chart_svg;     // render_svg's output; "" for none
  std::vector<std::string> notes;  // the paragraphs the table format prints under the table
  std::string rejections;    // render_rejections_text: the types that cannot run, and why
  std::vector<std::string> assumptions;
  std::string region;
  std::string prices_note;   // "prices as of 2026-11-29, embedded snapshot"
  std::vector<std::string> warnings;
};

std::string render_html(const HtmlReport& r);

// Text made safe for HTML and SVG element content and attribute values.
std::string html_escape(std::string_view s);

// A Table as an HTML <table>: headers with the column keys as titles, numbers
// right-aligned, the pick's row marked. Without `wide`, the columns the table
// format hides are left out and counted in `hidden`.
std::string html_table(const Table& t, bool wide, int* hidden = nullptr);

}  // namespace gpuadvisor
