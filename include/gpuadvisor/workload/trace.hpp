// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
// A request trace (--trace FILE): each request's arrival, prompt and output
// tokens, as load generators and published traces record them
// (docs/methodology.md §Serving under load, docs/cli.md §--trace).
#pragma once
#include <string>
#include <string_view>
#include <vector>

namespace gpuadvisor {

struct TraceRequest {
  double arrival_s = 0;  // from the trace's first arrival
  int prompt_tokens = 1, output_tokens = 1;
};

struct RequestTrace {
  std::string name;                    // the file, for messages and JSON
  std::vector<TraceRequest> requests;  // in arrival order
  double span_s() const { return requests.empty() ? 0 : requests.back().arrival_s; }
  // Its arrival rate: n - 1 gaps over its span (the mean gap, at which a
  // short trace's replay also starts its next period: replica_trace).
  double requests_per_second() const { return (static_cast<double>(requests.size()) - 1) / span_s(); }
};

// At most this many requests a trace holds.
inline constexpr size_t kMaxTraceRequests = 1'000'000;

// JSON Lines (one object a line) or CSV with a header. Arrival: `arrival_s`
// (seconds) or `timestamp` (JSON: milliseconds, as Mooncake's traces; CSV:
// seconds as BurstGPT's, or a date and time as Azure's LLM inference
// traces); prompt: `prompt_tokens`, `input_length`, `request tokens` or
// `contexttokens`; output: `output_tokens`, `output_length`, `response
// tokens` or `generatedtokens` (names match case aside; other keys and
// columns are ignored). Sorted by arrival and shifted to start at 0.
// InputError naming `name` and the line for anything else: a missing
// column, a length that is not a whole number from 1 to 10,000,000, fewer
// than 2 requests or all at one instant, more than kMaxTraceRequests.
RequestTrace parse_request_trace(std::string_view text, const std::string& name);

}  // namespace gpuadvisor
