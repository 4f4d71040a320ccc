// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// The recommendation objective (docs/methodology.md §The pick): among the
// feasible options, the fastest whose cost is within a slack of the cheapest.
// Shared by training (time = total hours, cost = the job) and serving (time =
// time per output token, cost = the service per month).
#pragma once
#include <cstddef>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace gpuadvisor {

inline constexpr double kDefaultCostSlack = 0.20;
// A training job's pick rule (docs/methodology.md §The pick): options longer
// than the horizon are never the pick, and each hour of the run is worth this
// much to whoever waits for it: a judgement, a fraction of an engineer's hour
// (the US median wage of software developers, $63.59/h in May 2023, BLS OES
// 15-1252), as a person does other work while a job runs.
inline constexpr double kDefaultHorizonDays = 90;
inline constexpr double kDefaultValueOfTimeUsdPerHour = 25;
// The most the pick may cost, as a multiple of the cheapest option within the
// horizon: speed buys at most the cheapest price again (a judgement, binding
// where a value of time would otherwise pay several times a small job's price
// to save hours; at large cost the slack binds first). 0: no ceiling.
inline constexpr double kDefaultMaxCostMultiple = 2;

// How much sooner an unpriced option must finish than the fastest priced one
// to be named beside it, and the fastest priced one than the pick to be named
// apart from it: more than the predictions' typical error (docs/validation.md:
// pre-training median about 8% out of sample).
inline constexpr double kSoonerToNameFraction = 0.10;

struct Candidate {
  std::optional<double> cost;  // unknown price: never picked, never cheapest
  double time = 0;             // smaller is better
  int accelerators = 0;        // ties go to the smaller cluster
  std::string group;           // the instance type
  double time_value_usd = 0;   // what the wait is worth (value of time x hours): added to the cost for the pick, not for "cheapest"
  bool eligible = true;        // within the horizon (and a deadline's p90): else listed last, never the pick, cheapest or fastest
  bool within_cost_ceiling = true;  // costs at most the ceiling's multiple of the cheapest: else never the pick, still listed
  // Bought on demand at a count no usual on-demand limit is known for (several
  // instances of a family without one): never the pick while an option one is
  // known to be able to start is within the slack.
  bool count_uncertain = false;
};

// The cheapest and the fastest candidate with a known price (an option one
// cannot price is no alternative to act on).
std::optional<size_t> cheapest(const std::vector<Candidate>& c);
// --max-cost-multiple: an option dearer than that multiple of the cheapest
// eligible one is never the pick, and the fastest within it is named before
// the fastest at any price (docs/methodology.md §The pick). 0: no ceiling.
void mark_cost_ceiling(std::vector<Candidate>& c, double multiple);
std::optional<size_t> fastest(const std::vector<Candidate>& c);
// The fastest priced candidate within the cost ceiling (within_cost_ceiling).
std::optional<size_t> fastest_within_cost_ceiling(const std::vector<Candidate>& c);
// The fastest candidate whose cost is at most (1 + slack) x the cheapest and
// whose cost x time is no more than the cheapest's (speed that pays for what it
// costs more); ties: fewer accelerators, then lower cost. nullopt when no price
// is known. The costs here are each candidate's cost plus its time_value_usd;
// only eligible candidates within the cost ceiling are considered, and where a
// candidate that is not count_uncertain is within the slack of them all, only those.
std::optional<size_t> pick(const std::vector<Candidate>& c, double slack);

// One candidate per group: the group's own pick (its fastest if it has no
// price), and `forced` for its group. Returned in input order.
std::vector<size_t> best_per_group(const std::vector<Candidate>& c, double slack, std::optional<size_t> forced);

// The default order: the pick first, then the candidates within the slack of
// the cheapest by time, then the rest by cost (unknown last). Indices.
std::vector<size_t> recommended_order(const std::vector<Candidate>& c, const std::vector<size_t>& keep, double slack,
                                      std::optional<size_t> pick_index);

// Everything a recommendation needs from the candidates: the pick, the
// alternatives, and the rows to show (one per group, or all) in the default order.
struct Choice {
  std::optional<size_t> pick, cheapest, fastest;
  std::optional<size_t> fastest_unpriced;  // sooner than `fastest` by kSoonerToNameFraction, without a known price
  std::optional<size_t> fastest_within_cost_ceiling;  // where `fastest` costs more than the ceiling allows
  std::vector<size_t> order;
};
Choice choose(const std::vector<Candidate>& c, double slack, bool every_candidate);

// Applies a choice to a recommendation whose `rows` the candidates were made
// from: sets `pick`, `cheapest`, `fastest` and keeps `order`'s rows in order.
template <class Recommendation>
void apply_choice(Recommendation& out, const Choice& ch) {
  if (ch.pick) {
    out.pick = out.rows[*ch.pick];
    out.cheapest = out.rows[*ch.cheapest];
    out.fastest = out.rows[*ch.fastest];
  }
  decltype(out.rows) rows;
  for (size_t i : ch.order) rows.push_back(out.rows[i]);
  out.rows = std::move(rows);
}

}  // namespace gpuadvisor
