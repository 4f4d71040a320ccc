// Layer search: layouts, instance counts, pricing channels and the ranking over them; includes serving and below.
// The search: the fastest feasible layout for each (instance type, count),
// and the ranked recommendation over the catalog (docs/methodology.md §Search).
#pragma once
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "gpuadvisor/catalog/catalog.hpp"
#include "gpuadvisor/physics/estimate.hpp"
#include "gpuadvisor/search/bill.hpp"
#include "gpuadvisor/search/capacity.hpp"
#include "gpuadvisor/physics/interruption.hpp"
#include "gpuadvisor/search/objective.hpp"
#include "gpuadvisor/physics/overheads.hpp"
#include "gpuadvisor/catalog/pricing.hpp"
#include "gpuadvisor/physics/rl.hpp"

namespace gpuadvisor {

// Layout dimensions the user fixed; empty means searched.
// The search tries context parallelism cp only while each rank keeps at least
// this many tokens of a sequence.
inline constexpr int kMinContextParallelTokens = 4096;

struct LayoutConstraints {
  std::optional<int> tp, pp, micro_batch, zero_stage, ep, vp, cp, recompute_layers;
  std::optional<int> etp;  // expert tensor parallel; 0: the same as tp (experts not folded)
  std::optional<Recompute> recompute;
};

struct ClusterSearch {
  std::optional<TrainingEstimate> best;  // fastest feasible layout
  double smallest_need_gb = 0;           // least memory per accelerator any layout needs
  double capacity_gb = 0;
  std::string problem;                   // why nothing is feasible (empty if `best`)
  long layouts_evaluated = 0;
  long layouts_pruned = 0;               // (sizes, micro-batch) families and interleavings the step-time bound cut
};

// Why this accelerator cannot run the workload at all (precision, purpose), or empty.
std::optional<std::string> accelerator_problem(const Accelerator& acc, const TrainingWorkload& w);

// How search_cluster walks the layouts; the answer is the same either way.
struct SearchOrder {
  bool prune = true;             // false: every layout evaluated (the check that pruning changes nothing)
  const Layout* start = nullptr; // parallel sizes to try first (the previous count's best), or none
};

// The fastest layout of one cluster (docs/methodology.md §Search).
ClusterSearch search_cluster(const ModelSpec& m, const TrainingWorkload& w, const Cluster& c,
                             const LayoutConstraints& fixed = {}, const SearchOrder& order = {});

// recommended (default): the pick, then the options within the cost slack by
// time, then the rest by cost (docs/methodology.md §The pick).
enum class SortBy { recommended, pareto, time, cost, cost_per_token };
std::optional<SortBy> sort_by_from_string(std::string_view s);
std::string_view to_string(SortBy s);

struct RecommendRequest {
  std::string region = "us-east-1";
  std::string data_region;  // --data-region: where the dataset and weights are ("": the job's region)
  // --region any or a list: the regions a training job is ranked across
  // (recommend_across_regions); empty or one: `region` alone.
  std::vector<std::string> regions;
  Pricing pricing = Pricing::on_demand;
  int max_instances = 512;
  bool exhaustive_search = false;     // evaluate every layout, no pruning (the check that pruning changes nothing)
  std::vector<std::string> families;  // empty: all
  std::vector<std::string> exclude;   // instance names or families
  std::optional<double> deadline_hours;
  std::optional<double> budget_usd;
  SortBy sort_by = SortBy::recommended;
  int top = 10;
  double cost_slack = kDefaultCostSlack;  // the pick: fastest within this share of the cheapest
  // The pick rule for training and RL (docs/methodology.md §The pick): runs
  // longer than the horizon are listed last and never the pick; each hour of
  // the run is weighed at the value of time. With a deadline and neither of
  // --cost-slack and --value-of-time given, the pick is the cheapest option
  // that meets the deadline at its p90 error.
  double horizon_hours = kDefaultHorizonDays * 24;
  double value_of_time_usd_per_hour = kDefaultValueOfTimeUsdPerHour;
  bool cost_slack_given = false, value_of_time_given = false;
  double max_cost_multiple = kDefaultMaxCostMultiple;  // the pick costs at most this x the cheapest within the horizon; 0: no ceiling
  bool all_counts = false;                // every instance count, not one row per instance type
  // Threads for the serving search's instance types (0: the machine's
  // cores); the answer is the same bytes for any count.
  int jobs = 0;
  // The account's on-demand vCPU quotas by VcpuQuota key ("p", "g", "inf",
  // "trn"; "all" for any): an option that needs more on demand, in a
  // reservation or under a commitment is not offered (docs/methodology.md §Quotas).
  std::map<std::string, int> quota_vcpus;
  // Job overheads and checkpoint storage (docs/methodology.md §Job overheads).
  OverheadSettings overheads;
  // Interruptions (docs/methodology.md §Interruptions).
  double restart_s = kDefaultRestartMinutes * 60;
};

struct RecommendRow {
  const Instance* instance = nullptr;
  int count = 0;
  TrainingEstimate estimate;
  std::optional<double> on_demand_usd_per_hour;  // per instance
  std::optional<double> spot_usd_per_hour;
  std::optional<double> on_demand_cost_usd;      // whole job
  std::optional<double> spot_cost_usd;
  std::optional<double> savings_1y_usd_per_hour;  // cheapest 1-year commitment, effective
  std::optional<double> savings_3y_usd_per_hour;
  std::optional<double> savings_1y_cost_usd;      // rate x instances x hours: the commitment is used for the rest of its term
  std::optional<double> savings_3y_cost_usd;
  // The channel that can deliver the option under the requested pricing
  // (docs/methodology.md §Channels): on demand within the usual count, else a
  // Capacity Block, else a reservation; spot within its usual count; a
  // commitment. Its cost is empty where the channel's rate is unknown; the
  // row is then ranked at the best known rate, flagged.
  Channel channel = Channel::on_demand;
  std::optional<double> channel_cost_usd;
  bool channel_rate_unknown = false;
  std::string channel_note;                      // one clause for a person; empty on demand within the usual count
  bool spot_offered = true;                      // within the usual spot count (else the spot figures are empty)
  std::string quota_exceeded;                    // the on-demand vCPU quota the channel needs and the option passes ("" if none)
  std::optional<double> ranked_cost_usd;         // the channel's cost, or the best known rate's where it is unknown
  std::string ranked_pricing;                    // the price the ranked cost is at: a channel's name
  std::optional<double> usd_per_million_tokens;  // under the requested pricing
  // Expected with interruptions: hardware failures on-demand, reclaims plus
  // failures on spot (empty when the spot interruption bucket is unknown).
  InterruptionCost on_demand_interruptions;
  std::optional<double> on_demand_expected_cost_usd;
  std::optional<InterruptionCost> spot_interruptions;
  std::optional<double> spot_expected_cost_usd;
  std::string spot_interruption_bucket;
  // Monthly interruption fraction above which on-demand is cheaper than spot
  // (nullopt: spot is cheaper at any rate up to 99%, or a price is unknown).
  std::optional<double> break_even_monthly_interruption;
  bool pareto = false;
  CapacityAdvice capacity;  // on-demand plausibility and the Capacity Block alternative
  std::optional<JobBill> bill;   // storage and transfer beside the compute (training; none for RL)
  std::optional<RlEstimate> rl;  // --task rl: the step's stages, placement and pools (estimate is the policy update's)
  // --task qlora: whether bf16 LoRA fits the same instances (docs/methodology.md
  // §The pick: QLoRA is picked where it is needed); empty for other tasks.
  std::optional<bool> bf16_lora_fits;
};

// Whether nothing delivers the row within the account's on-demand quota: past
// it, only spot and Capacity Blocks (their own limits) are left, and neither priced it.
bool blocked_by_quota(const RecommendRow& row);

// Fills every price of a row from its instance, count and estimate.total_hours
// (billed per second with EC2's 60 s minimum):
// hourly rates and job costs under each pricing model, the expected costs with
// interruptions, and the ranked cost under r.pricing (docs/methodology.md
// §Cost and ranking, §Interruptions and checkpoints).
// `hours_given`: the hours are the user's, so a Capacity Block covers them
// without the prediction's error margin.
void price_row(RecommendRow& row, const ModelSpec& m, const TrainingWorkload& w, const RecommendRequest& r, bool hours_given = false);
// The same without a model: rates, job costs and capacity for the hours, no
// interruption figures (they need the checkpoint size). A Capacity Block
// covers the hours x (1 + block_margin): the prediction's p90 error, 0 for
// hours the user gave.
void price_hours(RecommendRow& row, const RecommendRequest& r, double block_margin = 0);

// The wall time a row's ranked cost pays for: on spot with a known
// interruption range, the expected time with reclaims, failures and
// checkpoints (the hours its spot cost is billed for); else the prediction
// with job overheads (estimate.total_hours). The pick rule, the deadline and
// the headline read it, so a spot pick is held to the time it will take.
double ranked_hours(const RecommendRow& r);

// A --deadline against the pick's error band: the hours at the prediction
// plus its p90 error (the band the Capacity Block is sized to; 0 without one).
struct DeadlineMargin {
  double deadline_hours = 0, predicted_hours = 0, p90_abs_error = 0, hours_at_p90 = 0;
  bool exceeds_deadline_at_p90 = false;
};
std::optional<DeadlineMargin> deadline_margin(const RecommendRow& pick, const RecommendRequest& r);

struct Rejection {
  std::string instance;
  std::string reason;
  bool over_budget = false;  // refused by --budget: its service costs more (or its price is unknown)
  bool shape_does_not_divide = false;  // fits in memory, but no layout divides the model's heads, layers and batch
};

// A training pick at or above this share of its accelerators' memory gets a
// "memory:" line naming what has room: at most kRoomyMemoryShare.
inline constexpr double kTightMemoryShare = 0.97;
inline constexpr double kRoomyMemoryShare = 0.9;

// The pick's own cluster and layout at a smaller micro-batch that leaves room.
struct RoomierMicroBatch {
  int micro_batch = 1;
  double memory_share = 0;  // of each accelerator's memory, the reserve included
  double total_hours = 0;   // job overheads included, as the pick's
};

struct Recommendation {
  std::vector<RecommendRow> rows;        // ranked: one per instance type (every count with all_counts)
  size_t options_found = 0;              // feasible (instance type, count) options
  // The recommended option and the alternatives, over every count
  // (empty when no option has a known price).
  std::optional<RecommendRow> pick, cheapest, fastest;
  // The fastest option within the horizon when it has no known price and
  // finishes sooner than `fastest` (which is the fastest priced one).
  std::optional<RecommendRow> fastest_unpriced;
  // The fastest option within --max-cost-multiple of the cheapest, where
  // `fastest` (the fastest at any price) costs more than that.
  std::optional<RecommendRow> fastest_within_cost_ceiling;
  // When the pick needs more instances than one usually starts on demand: the
  // same rule over its type at the counts one can start (empty when none meets
  // the constraints).
  std::optional<RecommendRow> on_demand_pick;
  std::string why;                       // why the pick, in one sentence
  // Options longer than the horizon (listed last, never the pick), and the
  // fastest of them when no option is within it.
  int beyond_horizon = 0;
  std::optional<RecommendRow> fastest_beyond_horizon;
  // The option the rule would pick without --max-cost-multiple, where the
  // ceiling made the pick another (it costs more than the ceiling allows).
  std::optional<RecommendRow> above_cost_ceiling;
  // The option the rule would pick if counts without a known on-demand limit
  // counted as obtainable, where an option one can start was picked instead.
  std::optional<RecommendRow> uncertain_count_pick;
  // --pricing spot: the --pricing best pick (on demand, Capacity Blocks,
  // reservations and spot together) where its price plus its wait is lower.
  std::optional<RecommendRow> other_channels_pick;
  std::vector<Rejection> rejections;     // instance types with no acceptable option
  std::optional<double> cheapest_over_budget_usd;  // the least ranked cost --budget left out (none: it left none out)
  // The shortest run --deadline left out, and the shortest with a known price
  // (a pick needs one); none: it left none out.
  std::optional<double> fastest_over_deadline_hours, fastest_priced_over_deadline_hours;
  // With --budget too: the shortest run --deadline left out that the budget
  // would take (none: every option it left out is over the budget as well).
  std::optional<double> fastest_over_deadline_within_budget_hours;
  // Where the pick fills its memory (kTightMemoryShare) with a micro-batch
  // above 1: the largest smaller micro-batch with room (kRoomyMemoryShare).
  std::optional<RoomierMicroBatch> roomier_micro_batch;
  // --task qlora: the pick of the same job as bf16 LoRA (--task lora), empty
  // where LoRA fits nowhere; the fewest accelerators a priced QLoRA option
  // within the horizon uses; and how many options are set aside for it
  // (set_aside_for_lora).
  std::optional<RecommendRow> lora_alternative;
  int qlora_fewest_accelerators = 0;
  int options_set_aside_for_lora = 0;
  long layouts_evaluated = 0;
  long layouts_pruned = 0;  // (sizes, micro-batch) families and interleavings the step-time bound cut
  std::vector<std::string> notes;
  // --region any or a list: each region's own pick, in the order given, and
  // which one this recommendation is (recommend_across_regions).
  struct RegionPick {
    std::string region;
    std::optional<RecommendRow> pick;
    std::optional<double> transfer_usd;  // moving the data in from --data-region (0 there; nullopt: unknown)
    bool chosen = false;
  };
  std::vector<RegionPick> across_regions;
};

// --task qlora: QLoRA is for fitting a model on fewer accelerators, so an
// option bf16 LoRA fits on more accelerators than the fewest a priced QLoRA
// option uses is set aside: listed last, never the pick (docs/methodology.md §The pick).
bool set_aside_for_lora(const RecommendRow& x, const Recommendation& rec);

// --region any or a list (docs/methodology.md §Regions): the job ranked in each
// region, and the region whose pick weighs least (its price, moving the data
// in from --data-region, and each hour at the value of time; ties to the data's
// region, then the order given). Returns that region's recommendation, with
// across_regions filled; `region` is set to the chosen one.
Recommendation recommend_across_regions(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r,
                                        std::string& region);

// The regions the catalog prices any instance in, sorted.
std::vector<std::string> priced_regions(const Catalog& catalog);

// The rest of the bill (bill.hpp) for a row, and for every row and reference of
// a recommendation; RL rows have none.
void add_bill(RecommendRow& row, const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r);
void add_bills(Recommendation& rec, const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r);

// The value of an hour of the run under the request's pick rule (0 under the deadline rule).
double pick_rule_value_of_time(const RecommendRequest& r);

// The rule a training or RL pick is made by (docs/methodology.md §The pick):
// "deadline" (the cheapest that meets --deadline at its p90 error, when neither
// --cost-slack nor --value-of-time is given), "value-of-time" or "slack".
std::string_view pick_rule_name(const RecommendRequest& r);

// The instance counts searched for one type, ascending (docs/methodology.md
// §Search): powers of two and three times powers of two up to
// --max-instances (24, 48, 96, 192 beside 16, 32, 64), --max-instances
// itself, and the counts the user's limits imply: the type's usual on-demand
// count and the most instances its on-demand vCPU quota (--quota-vcpus)
// allows. One instance for a type without EFA.
std::vector<int> candidate_counts(const Instance& inst, const RecommendRequest& r);

// Whether --family/--exclude leave this instance type out.
bool excluded(const Instance& inst, const RecommendRequest& r);
// Whether a search considers this instance type: not left out by --family or
// --exclude, and offered in the region (else a rejection saying so is added).
bool considered(const Instance& inst, const RecommendRequest& r, std::vector<Rejection>& rejections);
// "13B", "1.5T", "350M".
std::string human_params(double params);

// Keeps a priced row unless it misses the deadline or the budget; otherwise
// records why in `filter` (the cheapest over-budget option is named).
struct RowFilter {
  double cheapest_over_budget = 1e300;
  std::string reason;
};
bool admit_row(RecommendRow&& row, const RecommendRequest& r, RowFilter& filter, Recommendation& out);
// Counts the options, marks the Pareto frontier, makes the pick and orders rows and rejections.
void finish_recommendation(Recommendation& out, const RecommendRequest& r);

Recommendation recommend(const ModelSpec& m, const TrainingWorkload& w, const Catalog& catalog, const RecommendRequest& r);

}  // namespace gpuadvisor
