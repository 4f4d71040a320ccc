// Layer report: every output format (text, CSV, markdown, JSON, HTML, SVG, launch files); includes validation and below.
// The toolkit every report uses: formats, cells, the provenance columns, and
// one Table rendered as text, CSV, markdown, JSON or HTML.
#include "gpuadvisor/report/report.hpp"
#include "gpuadvisor/base/json_text.hpp"
#include "gpuadvisor/report/html.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>
#include <set>
#include <stdexcept>

#include "gpuadvisor/physics/accuracy.hpp"
#include "gpuadvisor/workload/framework.hpp"
#include "gpuadvisor/physics/communication.hpp"
#include "gpuadvisor/physics/compute.hpp"
#include "gpuadvisor/workload/model.hpp"
#include "gpuadvisor/physics/overheads.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "report/detail.hpp"

namespace gpuadvisor {

using nlohmann::json;
using ordered_json = nlohmann::ordered_json;

std::optional<Format> format_from_string(std::string_view text) {
  const std::string s = lower_case(std::string(text));  // JSON as json: case is ignored
  if (s == "table") return Format::table;
  if (s == "json") return Format::json;
  if (s == "csv") return Format::csv;
  if (s == "markdown" || s == "md") return Format::markdown;
  if (s == "html") return Format::html;
  return std::nullopt;
}

std::string_view tool_version() { return GPUADVISOR_VERSION; }

// Numbers in JSON keep 6 significant digits (money keeps cents) so that the
// same inputs always give the same bytes and no spurious precision.
double sig6(double v) {
  // JSON cannot carry NaN or infinity, and a 0 in their place would be a
  // silent wrong answer: a non-finite result is a bug, reported as one (exit 1).
  if (!std::isfinite(v)) throw std::runtime_error("a computed value is not finite (NaN or infinity)");
  if (v == 0) return 0;
  // Scale by an exact power of ten on the side that keeps it exact: dividing
  // by 1e-5 would print 13015899999.999998 for 1.30159e10.
  const int exponent = 5 - static_cast<int>(std::floor(std::log10(std::fabs(v))));
  if (exponent >= 0) {
    const double scale = std::pow(10.0, exponent);
    return std::round(v * scale) / scale;
  }
  const double unit = std::pow(10.0, -exponent);
  return std::round(v / unit) * unit;
}

// Hourly rates keep the catalog's precision (21.957642; AWS lists up to 8
// decimals), only the float noise a discount adds is cut (44.032000000000004 is 44.032).
double rate_json_value(double usd_per_hour) {
  sig6(usd_per_hour);  // refuses NaN and infinity
  return std::round(usd_per_hour * 1e8) / 1e8;
}

namespace report_detail {

std::string thousands(double v, int decimals) { return format_thousands(v, decimals); }

std::string price_multiple_text(std::optional<double> cost, std::optional<double> pick_cost) {
  if (!cost || !pick_cost || *pick_cost <= 0) return "";
  const double multiple = *cost / *pick_cost;
  return multiple >= 2 ? fmt::format(" ({}x the pick's price)", format_thousands(multiple, multiple < 10 ? 1 : 0)) : "";
}

std::string cost_ceiling_fastest_text(const std::string& within, double max_cost_multiple, const std::string& any_price) {
  return fmt::format("{} (the fastest within {:g}x the cheapest price, --max-cost-multiple); at any price: {}", within, max_cost_multiple, any_price);
}

Cell money(std::optional<double> usd) {
  if (!usd) return {"unknown", std::monostate{}};
  sig6(*usd);  // refuses NaN and infinity
  double r = round_cents(*usd);
  return {"$" + thousands(r, r >= 1000 ? 0 : 2), r};
}
Cell rate(std::optional<double> usd) {
  if (!usd) return {"unknown", std::monostate{}};
  return {fmt::format("{:.4g}", *usd), rate_json_value(*usd)};
}
Cell num(double v, int decimals) { return {thousands(v, decimals), sig6(v)}; }
Cell integer(long long v) { return {thousands(double(v), 0), v}; }
Cell text(std::string s) { return {s, s}; }
Cell pct(double fraction) { return {fmt::format("{:.0f}%", fraction * 100), sig6(fraction)}; }
Cell pick_cell(bool is_pick) { return {is_pick ? "yes" : "", is_pick}; }

std::string_view channel_of(const RecommendRow& r, const RecommendRequest& request) {
  return r.ranked_pricing.empty() ? to_string(request.pricing) : to_string(r.channel);
}

Cell channel_cell(const RecommendRow& r) {
  const std::string name(to_string(r.channel));
  switch (r.channel) {
    case Channel::on_demand: return {r.capacity.limit_unknown ? "on demand?" : "on demand", name};
    case Channel::spot: return {r.spot_offered ? "spot" : "no spot", name};
    case Channel::capacity_block: return {r.channel_rate_unknown ? "block*" : "block", name};
    case Channel::reservation: return {"reserved", name};
    case Channel::savings_1y: return {"1y plan", name};
    case Channel::savings_3y: return {"3y plan", name};
  }
  return text(name);
}

Cell capacity_cell(const RecommendRow& r) {
  if (r.channel == Channel::capacity_block && !r.capacity.blocks_only && !r.capacity.beyond_on_demand) return text("capacity block");
  return text(r.capacity.column());
}

Cell spot_money(const RecommendRow& r, std::optional<double> usd) {
  return r.spot_offered ? money(usd) : Cell{"not offered", std::monostate{}};
}

Cell spot_bucket_cell(const RecommendRow& r) {
  if (!r.spot_offered) return {"not offered", std::monostate{}};
  return r.spot_interruption_bucket.empty() ? Cell{"unknown", std::monostate{}} : text(r.spot_interruption_bucket);
}

std::vector<Column> channel_columns() {
  return {{"channel_cost_usd", "CHANNEL COST", true, true, true},
          {"channel_rate_unknown", "CHANNEL RATE UNKNOWN", false, true, true},
          {"channel_note", "CHANNEL NOTE", false, true, true},
          {"spot_offered", "SPOT OFFERED", false, true, true},
          {"beyond_horizon", "BEYOND HORIZON", false, true, true},
          {"misses_deadline_at_p90", "MISSES DEADLINE AT P90", false, true, true},
          {"bf16_lora_fits", "BF16 LORA FITS", false, true, true},
          {"storage_usd", "STORAGE", true, true, true},
          {"transfer_usd", "TRANSFER", true, true, true},
          {"total_usd", "TOTAL", true, true, true}};
}

void append_channel(std::vector<Cell>& row, const RecommendRow& r, const RecommendRequest& request) {
  row.push_back(money(r.channel_cost_usd));
  row.push_back({r.channel_rate_unknown ? "yes" : "no", r.channel_rate_unknown});
  row.push_back(r.channel_note.empty() ? Cell{"", std::monostate{}} : text(r.channel_note));
  row.push_back({r.spot_offered ? "yes" : "no", r.spot_offered});
  const bool beyond = r.estimate.total_hours > request.horizon_hours;
  row.push_back({beyond ? "yes" : "no", beyond});
  if (const auto d = deadline_margin(r, request)) row.push_back({d->exceeds_deadline_at_p90 ? "yes" : "no", d->exceeds_deadline_at_p90});
  else row.push_back({"", std::monostate{}});
  if (r.bf16_lora_fits) row.push_back({*r.bf16_lora_fits ? "yes" : "no", *r.bf16_lora_fits});
  else row.push_back({"", std::monostate{}});
  // The rest of the bill (docs/methodology.md §The rest of the bill); empty for RL.
  const auto bill_money = [&](std::optional<double> JobBill::*part) { return r.bill ? money(*r.bill.*part) : Cell{"", std::monostate{}}; };
  row.push_back(bill_money(&JobBill::storage_usd));
  row.push_back(bill_money(&JobBill::transfer_usd));
  row.push_back(bill_money(&JobBill::total_usd));
}

std::string channel_words(const RecommendRow& r) {
  switch (r.channel) {
    case Channel::capacity_block:
      return r.channel_rate_unknown ? "at the on-demand rate (its Capacity Block rate unknown)" : "in Capacity Blocks";
    case Channel::reservation: return "reserved at the on-demand rate";
    default: return r.ranked_pricing;
  }
}

bool is_pick(const RecommendRow& r, const Recommendation& rec) {
  return rec.pick && r.instance == rec.pick->instance && r.count == rec.pick->count;
}

std::vector<Column> provenance_columns(bool with_pick, bool with_channel) {
  std::vector<Column> c{{"region", "REGION", false, true, true},
                        {"prices_as_of", "PRICES AS OF", false, true, true},
                        {"spot_advisor_as_of", "SPOT ADVISOR AS OF", false, true, true}};
  if (with_channel) c.push_back({"channel", "CHANNEL", false, true, true});
  if (with_pick) c.push_back({"pick", "PICK", false, true, true});
  return c;
}

void append_provenance(std::vector<Cell>& row, const Instance& i, const std::string& region, std::string_view channel,
                       std::optional<bool> pick, std::optional<Channel> priced_by) {
  const auto it = i.prices.find(region);
  auto date = [](const std::string& d) { return d.empty() ? Cell{"unknown", std::monostate{}} : text(d); };
  auto priced_date = [&](const RegionPrices& p) {
    if (priced_by == Channel::capacity_block && !p.capacity_block.as_of.empty()) return p.capacity_block.as_of;
    if (priced_by == Channel::spot && !p.spot.as_of.empty()) return p.spot.as_of;
    return p.on_demand.as_of;
  };
  row.push_back(text(region));
  row.push_back(it == i.prices.end() ? Cell{"unknown", std::monostate{}} : date(priced_date(it->second)));
  row.push_back(it == i.prices.end() ? Cell{"unknown", std::monostate{}} : date(it->second.spot.interruption_as_of));
  if (!channel.empty()) row.push_back(text(std::string(channel)));
  if (pick) row.push_back(pick_cell(*pick));
}

ordered_json to_json(const Value& v) {
  return std::visit(
      [](const auto& x) -> ordered_json {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return nullptr;
        else return x;
      },
      v);
}

ordered_json envelope(const Catalog& catalog, std::string_view command) {
  ordered_json j;
  j["schema_version"] = kJsonSchemaVersion;
  j["generated_by"] = fmt::format("gpuadvisor {}", tool_version());
  j["command"] = command;
  j["catalog"] = {{"version", catalog.catalog_version}, {"prices_as_of", catalog.prices_as_of}, {"prices_origin", catalog.prices_origin},
                  {"files", catalog.origins}};
  j["currency"] = catalog.currency;
  return j;
}

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n\r") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) {
    if (c == '"') out += "\"\"";
    else out.push_back(c);
  }
  return out + "\"";
}

std::string csv_value(const Cell& c) {
  return std::visit(
      [&](const auto& x) -> std::string {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::monostate>) return "";
        else if constexpr (std::is_same_v<T, double>) return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, long long>) return fmt::format("{}", x);
        else if constexpr (std::is_same_v<T, bool>) return x ? "true" : "false";
        else return csv_field(x);
      },
      c.value);
}

std::string join_sources(const std::vector<std::string>& s) {
  std::string out;
  for (const auto& k : s) out += (out.empty() ? "" : ", ") + k;
  return out;
}

}  // namespace report_detail
using namespace report_detail;

std::string render_version_json(const Catalog& catalog) {
  ordered_json j = envelope(catalog, "version");
  j["version"] = tool_version();
  j["warnings"] = ordered_json::array();
  return json_text(j, 2);
}

// The toolkit's one Table in each format: a column added to a command's
// table appears in every format from here.
namespace {

std::string json_document(const Table& t, const Catalog& catalog, std::string_view command, std::string_view rows_key, std::string_view extra_json) {
  ordered_json j = envelope(catalog, command);
  if (!extra_json.empty()) {
    ordered_json extra = ordered_json::parse(extra_json);
    for (auto it = extra.begin(); it != extra.end(); ++it) j[it.key()] = it.value();
  }
  ordered_json rows = ordered_json::array();
  for (const auto& r : t.rows) {
    ordered_json row;
    for (size_t c = 0; c < t.columns.size(); ++c) row[t.columns[c].key] = to_json(r[c].value);
    rows.push_back(row);
  }
  j[std::string(rows_key)] = rows;
  return json_text(j, 2) + "\n";
}

// Every column, keys as the header, values as programs read them.
std::string csv_document(const Table& t) {
  std::string out;
  for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_field(t.columns[c].key);
  out += "\n";
  for (const auto& r : t.rows) {
    for (size_t c = 0; c < t.columns.size(); ++c) out += (c ? "," : "") + csv_value(r[c]);
    out += "\n";
  }
  return out;
}

std::string markdown_cell(const std::string& s) {
  std::string out;
  for (char ch : s) {
    if (ch == '|') out += "\\|";
    else out.push_back(ch);
  }
  return out;
}

std::string markdown_table(const Table& t, const std::vector<size_t>& shown) {
  std::string out = "|";
  for (size_t c : shown) out += " " + markdown_cell(t.columns[c].header) + " |";
  out += "\n|";
  for (size_t c : shown) out += t.columns[c].right_align ? " ---: |" : " --- |";
  out += "\n";
  for (const auto& r : t.rows) {
    out += "|";
    for (size_t c : shown) out += " " + markdown_cell(r[c].text) + " |";
    out += "\n";
  }
  return out;
}

// Aligned columns for a terminal: numbers to the right, two spaces between.
std::string text_table(const Table& t, const std::vector<size_t>& shown) {
  std::vector<size_t> width(t.columns.size(), 0);
  for (size_t c : shown) {
    width[c] = t.columns[c].header.size();
    for (const auto& r : t.rows) width[c] = std::max(width[c], r[c].text.size());
  }
  auto line = [&](auto get) {
    std::string l;
    for (size_t i = 0; i < shown.size(); ++i) {
      size_t c = shown[i];
      std::string s = get(c);
      const bool last = i + 1 == shown.size();
      if (t.columns[c].right_align) l += std::string(width[c] - s.size(), ' ') + s;
      else l += last ? s : s + std::string(width[c] - s.size(), ' ');
      if (!last) l += "  ";
    }
    return l + "\n";
  };
  std::string out = line([&](size_t c) { return t.columns[c].header; });
  for (const auto& r : t.rows) out += line([&](size_t c) { return r[c].text; });
  return out;
}

}  // namespace

std::string markdown_text(std::string_view text) {
  std::string out;
  bool in_list = false;
  size_t at = 0;
  while (at < text.size()) {
    const size_t end = std::min(text.find('\n', at), text.size());
    const std::string_view line = text.substr(at, end - at);
    at = end + 1;
    const size_t first = line.find_first_not_of(' ');
    if (first == std::string_view::npos) {  // a blank line ends a list
      if (!out.empty() && out.back() == '\n' && !(out.size() > 1 && out[out.size() - 2] == '\n')) out += "\n";
      in_list = false;
      continue;
    }
    if (first > 0) {
      out += "- " + std::string(line.substr(first)) + "\n";
      in_list = true;
    } else {
      if (in_list) out += "\n";
      out += std::string(line) + "\n\n";
      in_list = false;
    }
  }
  return out;
}

std::string render_table(const Table& t, const Catalog& catalog, std::string_view command, std::string_view rows_key,
                         const RenderOptions& o, int* hidden_columns, std::string_view extra_json) {
  if (hidden_columns) *hidden_columns = 0;
  if (o.format == Format::html) return html_table(t, o.wide, hidden_columns);
  if (o.format == Format::json) return json_document(t, catalog, command, rows_key, extra_json);
  if (o.format == Format::csv) return csv_document(t);
  // Text and markdown: the data-only columns never, the wide-only ones with --wide (markdown: always).
  std::vector<size_t> shown;
  for (size_t c = 0; c < t.columns.size(); ++c)
    if (!t.columns[c].data_only && (o.wide || !t.columns[c].wide_only || o.format == Format::markdown)) shown.push_back(c);
  const auto data_only = std::count_if(t.columns.begin(), t.columns.end(), [](const Column& c) { return c.data_only; });
  if (hidden_columns) *hidden_columns = static_cast<int>(t.columns.size() - shown.size() - data_only);
  return o.format == Format::markdown ? markdown_table(t, shown) : text_table(t, shown);
}

}  // namespace gpuadvisor
