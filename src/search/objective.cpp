// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
#include "gpuadvisor/search/objective.hpp"

#include <algorithm>
#include <map>
#include <tuple>

namespace gpuadvisor {

namespace {

// Strict "better" orders, total so that the result is deterministic.
bool cheaper(const Candidate& a, const Candidate& b) {
  return std::tuple(*a.cost, a.time, a.accelerators, a.group) < std::tuple(*b.cost, b.time, b.accelerators, b.group);
}
bool quicker(const Candidate& a, const Candidate& b) {
  const double ca = a.cost.value_or(1e300), cb = b.cost.value_or(1e300);
  return std::tuple(a.time, a.accelerators, ca, a.group) < std::tuple(b.time, b.accelerators, cb, b.group);
}

std::optional<size_t> best_of(const std::vector<Candidate>& c, const std::vector<size_t>& among, bool (*better)(const Candidate&, const Candidate&),
                              bool priced_only) {
  std::optional<size_t> best;
  for (size_t i : among) {
    if (priced_only && (!c[i].cost || !c[i].eligible)) continue;
    if (!best || better(c[i], c[*best])) best = i;
  }
  return best;
}

// The cost the pick weighs: the price plus what the wait is worth.
double weighed(const Candidate& c) { return *c.cost + c.time_value_usd; }
bool weighed_lower(const Candidate& a, const Candidate& b) {
  return std::tuple(weighed(a), *a.cost, a.time, a.accelerators, a.group) < std::tuple(weighed(b), *b.cost, b.time, b.accelerators, b.group);
}

std::vector<size_t> all(const std::vector<Candidate>& c) {
  std::vector<size_t> v(c.size());
  for (size_t i = 0; i < c.size(); ++i) v[i] = i;
  return v;
}

// Within the slack, an option dearer than another qualifies only if it is
// faster by at least the share it costs more: its cost x time no worse than
// that of every cheaper option within the slack (a blind trial's DeepSeek
// service took 16% more than the cheapest for a 4% lower time per token, and
// its DeepSeek-V3 pre-training 11% more than the runner-up for 0.5% less time).
// With a value of time the reference is the least weighed cost (price plus
// wait), and the slack is a share of the cheapest price in dollars: an option
// qualifies within that many dollars of the least weighed cost. Without one
// (time value 0) this is the rule above: cost <= (1 + slack) x the cheapest.
// The largest weighed cost within the slack: the least weighed cost plus the
// slack's share of the cheapest price (nullopt when nothing is priced). Written
// as (1 + slack) x the cheapest when nothing is weighed, so those picks keep their bytes.
std::optional<double> slack_bound(const std::vector<Candidate>& c, const std::vector<size_t>& among, double slack) {
  const auto low = best_of(c, among, weighed_lower, true);
  if (!low) return std::nullopt;
  const size_t cheapest_index = *best_of(c, among, cheaper, true);
  if (cheapest_index == *low && c[*low].time_value_usd == 0) return *c[*low].cost * (1 + slack);
  return weighed(c[*low]) + slack * *c[cheapest_index].cost;
}

std::optional<size_t> pick_among(const std::vector<Candidate>& c, const std::vector<size_t>& among, double slack) {
  const auto limit = slack_bound(c, among, slack);
  if (!limit) return std::nullopt;
  const double bound = *limit;
  std::vector<size_t> within;
  for (size_t i : among)
    if (c[i].cost && c[i].eligible && weighed(c[i]) <= bound) within.push_back(i);
  std::stable_sort(within.begin(), within.end(), [&](size_t a, size_t b) { return weighed_lower(c[a], c[b]); });
  std::vector<size_t> qualified;
  double least_value = 1e300;  // the lowest cost x time among the cheaper options
  for (size_t i : within) {
    const double value = weighed(c[i]) * c[i].time;
    if (value <= least_value) qualified.push_back(i);
    least_value = std::min(least_value, value);
  }
  return best_of(c, qualified, quicker, true);
}

}  // namespace

std::optional<size_t> cheapest(const std::vector<Candidate>& c) { return best_of(c, all(c), cheaper, true); }

void mark_cost_ceiling(std::vector<Candidate>& c, double multiple) {
  if (multiple <= 0) return;
  const auto low = cheapest(c);
  if (!low) return;
  const double ceiling = *c[*low].cost * multiple;
  for (auto& k : c) k.within_cost_ceiling = !k.cost || *k.cost <= ceiling;
}
std::optional<size_t> fastest(const std::vector<Candidate>& c) { return best_of(c, all(c), quicker, true); }
std::optional<size_t> fastest_within_cost_ceiling(const std::vector<Candidate>& c) {
  std::vector<size_t> within;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i].within_cost_ceiling) within.push_back(i);
  return best_of(c, within, quicker, true);
}
// An option one can start beats one that may not start at all
// (docs/methodology.md §The pick): where an option with a known count is
// within the slack of them all, the rule runs over those alone.
std::optional<size_t> pick(const std::vector<Candidate>& c, double slack) {
  std::vector<size_t> among, known;
  for (size_t i = 0; i < c.size(); ++i)
    if (c[i].within_cost_ceiling) {
      among.push_back(i);
      if (!c[i].count_uncertain) known.push_back(i);
    }
  const auto bound = slack_bound(c, among, slack);
  const bool known_within = bound && std::any_of(known.begin(), known.end(), [&](size_t i) {
    return c[i].cost && c[i].eligible && weighed(c[i]) <= *bound;
  });
  return pick_among(c, known_within ? known : among, slack);
}

// A type without a price: the same rule with accelerator-hours standing in
// for the cost (what any one price per accelerator-hour would bill), so its row
// is not simply its largest, fastest count.
std::optional<size_t> unpriced_pick(const std::vector<Candidate>& c, const std::vector<size_t>& members, double slack) {
  std::vector<Candidate> proxy;
  for (size_t i : members) proxy.push_back({c[i].accelerators * c[i].time, c[i].time, c[i].accelerators, c[i].group});
  const auto i = pick(proxy, slack);
  return i ? std::optional<size_t>(members[*i]) : std::nullopt;
}

std::vector<size_t> best_per_group(const std::vector<Candidate>& c, double slack, std::optional<size_t> forced) {
  std::map<std::string, std::vector<size_t>> groups;
  for (size_t i = 0; i < c.size(); ++i) groups[c[i].group].push_back(i);
  std::vector<size_t> keep;
  for (const auto& [name, members] : groups) {
    std::optional<size_t> best;
    if (forced && c[*forced].group == name) best = forced;
    if (!best) best = pick_among(c, members, slack);
    if (!best) best = unpriced_pick(c, members, slack);
    keep.push_back(*best);
  }
  std::sort(keep.begin(), keep.end());
  return keep;
}

std::vector<size_t> recommended_order(const std::vector<Candidate>& c, const std::vector<size_t>& keep, double slack,
                                      std::optional<size_t> pick_index) {
  const std::optional<double> bound = slack_bound(c, keep, slack);  // the pick's own bound: the table's "within the slack" is the rule's
  auto within = [&](size_t i) { return c[i].cost && c[i].eligible && bound && weighed(c[i]) <= *bound; };
  std::vector<size_t> order = keep;
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if ((pick_index && a == *pick_index) != (pick_index && b == *pick_index)) return pick_index && a == *pick_index;
    if (c[a].eligible != c[b].eligible) return c[a].eligible;  // beyond the horizon: last
    if (within(a) != within(b)) return within(a);
    if (within(a)) return quicker(c[a], c[b]);
    if (c[a].cost.has_value() != c[b].cost.has_value()) return c[a].cost.has_value();
    if (!c[a].cost) return quicker(c[a], c[b]);
    return cheaper(c[a], c[b]);
  });
  return order;
}

Choice choose(const std::vector<Candidate>& c, double slack, bool every_candidate) {
  Choice out;
  out.pick = pick(c, slack);
  if (out.pick) {
    out.cheapest = cheapest(c);
    out.fastest = fastest(c);
    // One no faster than the pick by more than the predictions' typical error
    // is the pick's speed as far as the model can tell: the pick is named (a
    // trial's "fastest per token" was 3 x p5 at 45% more for the same 26 ms).
    auto or_pick = [&](std::optional<size_t> f) {
      return f && c[*f].time >= (1 - kSoonerToNameFraction) * c[*out.pick].time ? out.pick : f;
    };
    out.fastest = or_pick(out.fastest);
    // A 12-minute run at 2,370x the pick's price is no one's alternative: the
    // fastest one would weigh is the fastest within the ceiling.
    if (const auto f = or_pick(fastest_within_cost_ceiling(c)); f && out.fastest && *f != *out.fastest) out.fastest_within_cost_ceiling = f;
    std::vector<size_t> within;  // every option within the horizon, priced or not
    for (size_t i = 0; i < c.size(); ++i)
      if (c[i].eligible) within.push_back(i);
    const auto quickest = best_of(c, within, quicker, false);
    // Named only when sooner by more than the predictions' typical error: a
    // few seconds on an 18-minute job is no reason to look for a price.
    if (quickest && !c[*quickest].cost && c[*quickest].time < (1 - kSoonerToNameFraction) * c[*out.fastest].time)
      out.fastest_unpriced = quickest;
  }
  const std::vector<size_t> keep = every_candidate ? all(c) : best_per_group(c, slack, out.pick);
  out.order = recommended_order(c, keep, slack, out.pick);
  return out;
}

}  // namespace gpuadvisor
