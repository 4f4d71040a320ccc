// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
#include "gpuadvisor/serving/scheduler.hpp"

#include <algorithm>
#include <cmath>
#include <deque>

#include "gpuadvisor/serving/kv_blocks.hpp"

namespace gpuadvisor {

namespace {

struct Sequence {
  int request = 0;
  int prompt_target = 0;  // tokens to prefill: the prompt, plus what it had generated if preempted
  int computed = 0;       // of those, done
  int cached = 0;         // tokens in its KV cache
  int generated = 0;      // output tokens out
  int64_t blocks = 0;     // its own: the shared prefix's are held once for all
  int shared = 0;         // leading prompt tokens in the shared prefix, cached before it arrives
  int64_t shared_blocks = 0;  // the blocks those fill (held once for all)
  double credit = 0;      // speculative decoding: the fraction of a token emitted but not yet out
  int output_tokens = 0;  // the request's (kept here: the loops over running sequences read it every step)
  bool decoding() const { return computed == prompt_target; }
  int left() const { return output_tokens - generated; }
};

struct Chunk {
  size_t index;  // into running
  int tokens;
};

// The attended tokens of a step's sequences, summed: attended_tokens is
// linear in the context and the context cut at the sliding window, so the
// two (whole or half tokens) are summed as integers and the formula applied
// once. The integer sums are exact, the same in any order, and no addition
// waits on the last (the loops over running sequences are the simulator's
// inner loop).
class AttendedSum {
 public:
  explicit AttendedSum(const ModelSpec& m) : model_(m), twice_window_(m.every_layer_attends_all() ? 0 : 2 * int64_t{m.sliding_window}) {}
  // A sequence at a context of half `twice_context` tokens.
  void add_twice(int64_t twice_context) {
    twice_tokens_ += twice_context;
    if (twice_window_ > 0) twice_windowed_ += std::min(twice_context, twice_window_);
  }
  double total() const { return model_.attended_tokens_of_sums(twice_tokens_ / 2.0, twice_windowed_ / 2.0); }

 private:
  const ModelSpec& model_;
  const int64_t twice_window_;  // 0: every layer attends to the whole context
  int64_t twice_tokens_ = 0, twice_windowed_ = 0;
};

constexpr int64_t kMostTabledTokens = 1 << 18;

class Engine {
 public:
  Engine(std::vector<SimRequest>& r, const ArrivalPattern& a, const EngineLimits& l, StepTimer& t, const ModelSpec& m, const EngineProfile& e,
         const EarlyStop& stop)
      : requests_(r), arrivals_(a), limits_(l), timer_(t), model_(m), engine_(e), stop_(stop),
        every_token_cached_(kv_cached_tokens(m, e, 1e15) == 1e15) {
    pool_.total = l.kv_blocks;
    pool_.used = std::min(l.kv_blocks, blocks_for(l.shared_prefix_tokens));  // the shared prefix, held once
    if (!every_token_cached_) table_blocks();
  }
  SchedulerTotals run();

 private:
  // Blocks a sequence of `tokens` holds; every layer caches them all unless
  // the model has sliding-window layers the engine caches only a window of.
  // (Whole tokens: the loops over running sequences ask this every step.)
  int64_t blocks_for(int64_t tokens) const {
    if (every_token_cached_) return (tokens + kKvBlockTokens - 1) / kKvBlockTokens;
    if (tokens >= 0 && tokens < static_cast<int64_t>(blocks_at_.size())) return blocks_at_[tokens];
    return KvBlockPool::blocks_for(model_.attended_tokens(static_cast<double>(tokens)));  // kv_cached_tokens where not every token is
  }
  // Sliding-window caches: blocks_for by table up to the longest request
  // (the formula's divisions were most of the inner loop's time).
  void table_blocks() {
    int64_t longest = 0;
    for (const SimRequest& r : requests_) longest = std::max<int64_t>(longest, r.prompt_tokens + r.output_tokens);
    const int64_t size = std::min<int64_t>(longest + limits_.decode_lookahead + 2, kMostTabledTokens);
    std::vector<int64_t> table(size);
    for (int64_t t = 0; t < size; ++t) table[t] = blocks_for(t);
    blocks_at_ = std::move(table);
  }
  // A sequence's own blocks at `tokens` cached: beyond the shared prefix.
  int64_t own_blocks(const Sequence& s, int64_t tokens) const { return blocks_for(tokens) - s.shared_blocks; }
  // A request as it joins the queue: its shared prefix already computed and cached.
  Sequence arriving(int request, int prompt_target, int generated) const {
    const int shared = std::min(limits_.shared_prefix_tokens, requests_[request].prompt_tokens - 1);
    return Sequence{.request = request,
                    .prompt_target = prompt_target,
                    .computed = shared,
                    .cached = shared,
                    .generated = generated,
                    .shared = std::max(0, shared),
                    .shared_blocks = blocks_for(std::max(0, shared)),
                    .output_tokens = requests_[request].output_tokens};
  }
  // Tokens `steps` decode steps emit for a sequence (all of them without
  // speculation); `take` keeps the credit they leave.
  int emitted(Sequence& s, int steps, bool take) const;
  void arrive();
  void issue(double at);
  void receive();
  void count_decode_steps(int steps);
  void preempt_last();
  bool grow_decodes(size_t& decoding);
  bool router_lets_join(int budget) const;
  void admit(std::vector<Chunk>& chunks, int& budget);
  void continue_prefills(std::vector<Chunk>& chunks, int& budget);
  int steps_to_first_finish(const Sequence& s) const;
  int decode_run_length(double step_s, int to_first_finish) const;
  void run_decodes(int steps);
  void run_step(const std::vector<Chunk>& chunks, bool decode);
  void account(double dt, int64_t steps);
  void finish_done();
  void reject_alone();

  std::vector<SimRequest>& requests_;
  const ArrivalPattern& arrivals_;
  const EngineLimits& limits_;
  StepTimer& timer_;
  const ModelSpec& model_;
  const EngineProfile& engine_;
  const EarlyStop& stop_;
  const bool every_token_cached_;
  std::vector<int64_t> blocks_at_;  // blocks_for by token count, where not every token is cached
  int late_ttft_ = 0, late_tpot_ = 0;  // requests that missed each target (EarlyStop)
  KvBlockPool pool_;
  std::deque<Sequence> inbox_;    // arrived, not yet taken in by the server (receive_every_steps)
  std::deque<Sequence> waiting_;
  std::vector<Sequence> running_;
  std::vector<Chunk> chunks_;      // this step's prefill chunks (kept to reuse its memory)
  std::vector<char> chunked_;      // per running sequence: prefilled in this step
  SchedulerTotals totals_;
  double now_ = 0;
  size_t next_ = 0;  // open loop: next arrival; closed loop: next request to send
  size_t ended_ = 0;
  int steps_since_receive_ = 0;  // decode steps since the server last looked for arrivals (receive_every_steps)
  int steps_since_join_ = 0;     // decode steps since waiting prompts last joined the batch (join_after_steps)
};

int Engine::emitted(Sequence& s, int steps, bool take) const {
  if (limits_.tokens_per_decode_step == 1) return std::min(steps, s.left());
  const double total = s.credit + steps * limits_.tokens_per_decode_step;
  const int whole = static_cast<int>(std::floor(total + 1e-9));
  if (take) s.credit = total - whole;
  return std::min(whole, s.left());
}

void Engine::arrive() {
  if (arrivals_.closed_loop) return;
  while (next_ < requests_.size() && requests_[next_].arrival_s <= now_) {
    const SimRequest& r = requests_[next_];
    inbox_.push_back(arriving(static_cast<int>(next_), r.prompt_tokens, 0));
    ++next_;
  }
}

void Engine::issue(double at) {
  if (!arrivals_.closed_loop || next_ >= requests_.size()) return;
  requests_[next_].arrival_s = at;
  inbox_.push_back(arriving(static_cast<int>(next_), requests_[next_].prompt_tokens, 0));
  ++next_;
}

// The server looks for arrivals every receive_every_steps decode steps
// (SGLang's SchedulerRecvSkipper: a decode step counts 1, a prefill step
// enough for the next look; an idle engine looks at once), and takes in
// what the inbox holds. With TensorRT-LLM's attention-DP balance it also
// releases once a prompt waits for every rank, or a rank has nothing to run.
void Engine::receive() {
  const bool idle = running_.empty() && waiting_.empty();
  const int ranks = limits_.release_when_waiting;
  const bool balanced = ranks > 0 && (static_cast<int>(inbox_.size()) >= ranks || static_cast<int>(running_.size()) < ranks);
  if (limits_.receive_every_steps > 1 && !idle && !balanced && steps_since_receive_ < limits_.receive_every_steps) return;
  for (Sequence& s : inbox_) waiting_.push_back(s);
  inbox_.clear();
  steps_since_receive_ = 0;
}

// `steps` decode steps ran: with nothing waiting in the inbox the looks
// they held found nothing, and only their phase carries on (a run is cut at
// the next look when something waits: decode_run_length).
void Engine::count_decode_steps(int steps) {
  steps_since_join_ += steps;
  if (limits_.receive_every_steps <= 1) return;
  steps_since_receive_ += steps;
  if (inbox_.empty()) steps_since_receive_ %= limits_.receive_every_steps;
}

// Recompute preemption: the blocks are freed, and the sequence waits at the
// front to prefill its prompt and the tokens it had generated again.
void Engine::preempt_last() {
  Sequence s = running_.back();
  running_.pop_back();
  pool_.give(s.blocks);
  ++requests_[s.request].preemptions;
  ++totals_.preemptions;
  const SimRequest& r = requests_[s.request];
  waiting_.push_front(arriving(s.request, r.prompt_tokens + s.generated, s.generated));
}

// Each decoding sequence's next token needs room; false if the last one
// standing had to be preempted (nothing to decode). `decoding`: the running
// sequences that decode (counted in the same pass, the inner loop's).
bool Engine::grow_decodes(size_t& decoding) {
  decoding = 0;
  if (limits_.reserves_full_kv) {
    decoding = std::count_if(running_.begin(), running_.end(), [](const Sequence& s) { return s.decoding(); });
    return true;
  }
  for (size_t i = 0; i < running_.size(); ++i) {
    Sequence& s = running_[i];
    if (!s.decoding()) continue;
    ++decoding;
    const int64_t need = own_blocks(s, s.cached + limits_.decode_lookahead) - s.blocks;
    while (need > pool_.free() && running_.size() > i + 1) preempt_last();
    if (need > pool_.free()) {
      preempt_last();  // itself
      return false;
    }
    pool_.take(need);
    running_[i].blocks += need;
  }
  return true;
}

void Engine::continue_prefills(std::vector<Chunk>& chunks, int& budget) {
  for (size_t i = 0; i < running_.size() && budget > 0; ++i) {
    Sequence& s = running_[i];
    if (s.decoding()) continue;
    const int tokens = std::min(s.prompt_target - s.computed, budget);
    const int64_t need = limits_.reserves_full_kv ? 0 : own_blocks(s, s.cached + tokens) - s.blocks;
    if (!pool_.take(need)) continue;
    s.blocks += need;
    chunks.push_back({i, tokens});
    budget -= tokens;
  }
}

// TGI's router: waiting prompts join a decoding batch once the hold since the
// last join has run out (its waiting_tokens counts the steps from 1), or when
// at least floor(ratio x running) of them fit the free slots and the budget.
bool Engine::router_lets_join(int budget) const {
  if (limits_.join_after_steps <= 0 || running_.empty() || 1 + steps_since_join_ >= limits_.join_after_steps) return true;
  const size_t least = static_cast<size_t>(std::floor(limits_.join_ratio * static_cast<double>(running_.size())));
  const size_t slots = static_cast<size_t>(std::max(0, limits_.max_sequences - static_cast<int>(running_.size())));
  size_t fit = 0;
  for (int64_t tokens = 0; fit < std::min(waiting_.size(), slots); ++fit) {
    tokens += waiting_[fit].prompt_target - waiting_[fit].computed;
    if (tokens > budget && fit > 0) break;  // a prompt longer than the budget prefills alone (admit)
  }
  return fit >= least;
}

// Waiting requests in order while the sequence limit, the budget and the KV
// blocks allow (a separate prefill takes whole prompts, at least one).
void Engine::admit(std::vector<Chunk>& chunks, int& budget) {
  while (!waiting_.empty() && static_cast<int>(running_.size()) < limits_.max_sequences && budget > 0) {
    Sequence s = waiting_.front();
    const SimRequest& r = requests_[s.request];
    int tokens = s.prompt_target - s.computed;
    if (limits_.chunked) tokens = std::min(tokens, budget);
    else if (tokens > budget && !chunks.empty()) break;
    const int64_t need = limits_.reserves_full_kv ? own_blocks(s, r.prompt_tokens + r.output_tokens) : own_blocks(s, s.cached + tokens);
    if (!pool_.take(need)) break;
    waiting_.pop_front();
    s.blocks = need;
    if (requests_[s.request].scheduled_s < 0) requests_[s.request].scheduled_s = now_;
    running_.push_back(s);
    chunks.push_back({running_.size() - 1, tokens});
    budget -= tokens;
  }
}

// A request that does not fit the KV cache even alone is turned away.
void Engine::reject_alone() {
  int request;
  if (!running_.empty()) {
    request = running_.back().request;
    pool_.give(running_.back().blocks);
    running_.pop_back();
  } else if (!waiting_.empty()) {
    request = waiting_.front().request;
    waiting_.pop_front();
  } else {
    return;
  }
  requests_[request].rejected = true;
  ++ended_;
  issue(now_);
}

void Engine::account(double dt, int64_t steps) {
  totals_.busy_s += dt;
  totals_.sequence_seconds += dt * running_.size();
  totals_.block_seconds += dt * pool_.used;
  totals_.steps += steps;
  now_ += dt;
}

void Engine::finish_done() {
  for (size_t i = 0; i < running_.size();) {
    Sequence& s = running_[i];
    if (s.generated < s.output_tokens) {
      ++i;
      continue;
    }
    SimRequest& r = requests_[s.request];
    r.finish_s = now_;
    if (r.output_tokens > 1 && (now_ - r.first_token_s) / (r.output_tokens - 1) > stop_.max_tpot_s) ++late_tpot_;
    pool_.give(s.blocks);
    running_.erase(running_.begin() + i);
    ++ended_;
    issue(now_);
  }
}

// One step: the chunks given and, with `decode`, a token for every decoding sequence.
void Engine::run_step(const std::vector<Chunk>& chunks, bool decode) {
  StepComposition c;
  std::vector<char>& chunked = chunked_;
  chunked.assign(running_.size(), 0);
  for (const Chunk& k : chunks) {
    const Sequence& s = running_[k.index];
    c.prefill_tokens += k.tokens;
    c.prefill_attended_pairs += k.tokens * model_.attended_tokens(s.computed + k.tokens / 2.0);
    chunked[k.index] = 1;
  }
  AttendedSum attended(model_);
  for (size_t i = 0; decode && i < running_.size(); ++i)
    if (!chunked[i] && running_[i].decoding()) {
      ++c.decode_sequences;
      attended.add_twice(2 * int64_t{running_[i].cached});
    }
  c.decode_attended_tokens = attended.total();
  account(timer_.step_s(c), 1);
  if (chunks.empty() || limits_.release_when_waiting > 0) count_decode_steps(1);  // the balance counts every iteration
  else steps_since_receive_ = limits_.receive_every_steps;  // SGLang, a prefill step: the next round looks
  bool done = false;  // a sequence emitted its last token
  for (const Chunk& k : chunks) {
    Sequence& s = running_[k.index];
    s.computed += k.tokens;
    s.cached += k.tokens;
    if (!s.decoding()) continue;
    ++s.generated;  // the prefill's last position samples the next token
    done = done || s.generated >= s.output_tokens;
    SimRequest& r = requests_[s.request];
    if (r.first_token_s < 0) {
      r.first_token_s = now_;
      if (now_ - r.arrival_s > stop_.max_ttft_s) ++late_ttft_;
    }
  }
  for (size_t i = 0; decode && i < running_.size(); ++i)
    if (!chunked[i] && running_[i].decoding() && running_[i].generated > 0) {
      const int n = emitted(running_[i], 1, true);
      running_[i].generated += n;
      running_[i].cached += n;
      done = done || running_[i].generated >= running_[i].output_tokens;
    }
  if (done) finish_done();
}

// Decode-only steps change nothing but the contexts until a sequence
// finishes, a request arrives that could be admitted, or the blocks run out:
// that many steps run as one, timed at their mean context.
// Decode steps until the sequence emits its last token (at least 1).
int Engine::steps_to_first_finish(const Sequence& s) const {
  const double per_step = limits_.tokens_per_decode_step;
  if (per_step == 1) return std::max(1, s.left());
  return std::max(1, static_cast<int>(std::ceil((s.left() - s.credit) / per_step - 1e-9)));
}

// `to_first_finish`: the fewest steps_to_first_finish over the running sequences.
int Engine::decode_run_length(double step_s, int to_first_finish) const {
  int k = to_first_finish;
  const double per_step = limits_.tokens_per_decode_step;
  const bool room = static_cast<int>(running_.size()) < limits_.max_sequences;
  if (!inbox_.empty()) k = std::min(k, std::max(1, limits_.receive_every_steps - steps_since_receive_));
  // TGI's router: prompts held waiting join when the hold runs out (with a
  // free slot: a full batch takes them at a finish, which ends the run).
  const bool router_holds = limits_.join_after_steps > 0;
  if (router_holds && room && !waiting_.empty()) k = std::min(k, std::max(1, limits_.join_after_steps - 1 - steps_since_join_));
  // An arrival matters when it could be admitted, (balance) fill the held
  // prompts to one per rank, or (router) make enough waiting to join.
  const bool arrival_matters = (waiting_.empty() || router_holds) && (inbox_.empty() || limits_.release_when_waiting > 0);
  if (!arrivals_.closed_loop && arrival_matters && room && next_ < requests_.size())
    k = std::min<double>(k, std::max(1.0, std::ceil((requests_[next_].arrival_s - now_) / step_s)));
  if (limits_.reserves_full_kv) return std::max(k, 1);
  auto extra = [&](int steps) {
    int64_t n = 0;
    for (const Sequence& s : running_) {
      const int64_t tokens = per_step == 1 ? steps : static_cast<int64_t>(std::ceil(s.credit + steps * per_step));  // no credit without speculation
      n += own_blocks(s, s.cached + tokens) - s.blocks;
    }
    return n;
  };
  // Each sequence's blocks grow by at most ceil(tokens / block) over the run
  // (it holds what its context needs, and the context grows by `tokens`):
  // where that much is free, the run fits without the sum.
  auto most_extra = [&](int steps) {
    const double tokens = per_step == 1 ? steps : std::ceil(1 + steps * per_step);
    return static_cast<int64_t>(running_.size()) * static_cast<int64_t>(std::ceil(tokens / kKvBlockTokens));
  };
  while (k > 1 && most_extra(k) > pool_.free() && extra(k) > pool_.free()) k /= 2;
  return std::max(k, 1);
}

void Engine::run_decodes(int steps) {
  StepComposition c;
  c.decode_sequences = static_cast<int>(running_.size());
  AttendedSum attended(model_);
  bool done = false;  // a sequence emitted its last token
  for (Sequence& s : running_) {
    const int tokens = emitted(s, steps, true);
    // Its context over the run: from what it holds to what it will, at the mean.
    attended.add_twice(2 * int64_t{s.cached} + tokens - 1);
    const int64_t need = limits_.reserves_full_kv ? 0 : own_blocks(s, s.cached + tokens) - s.blocks;
    pool_.take(need);
    s.blocks += need;
    s.generated += tokens;
    s.cached += tokens;
    done = done || s.generated >= s.output_tokens;
  }
  c.decode_attended_tokens = attended.total();
  account(steps * timer_.step_s(c), steps);
  count_decode_steps(steps);
  if (done) finish_done();
}

SchedulerTotals Engine::run() {
  if (arrivals_.closed_loop)
    for (int i = 0; i < arrivals_.clients; ++i) issue(0);
  for (int64_t rounds = 0; ended_ < requests_.size(); ++rounds) {
    if (late_ttft_ > stop_.late_allowed || late_tpot_ > stop_.late_allowed) {
      totals_.stopped_early = true;
      break;
    }
    if (rounds >= kMaxSchedulerRounds) {
      totals_.cut_short = true;  // the requests not finished are left out of the metrics, and the run reads as saturated
      break;
    }
    arrive();
    receive();
    if (running_.empty() && waiting_.empty()) {
      if (next_ >= requests_.size()) break;
      now_ = std::max(now_, requests_[next_].arrival_s);
      continue;
    }
    std::vector<Chunk>& chunks = chunks_;
    chunks.clear();
    int budget = limits_.token_budget;
    const bool may_admit = limits_.continuous || running_.empty();
    if (!limits_.chunked) {
      if (may_admit && router_lets_join(budget)) admit(chunks, budget);
      if (!chunks.empty()) {
        steps_since_join_ = 0;
        run_step(chunks, false);
        continue;
      }
    }
    size_t decoding = 0;
    if (!grow_decodes(decoding)) continue;  // the decodes' next blocks first, whether or not they run this step
    if (!limits_.prefill_pauses_decode) budget -= static_cast<int>(decoding) * limits_.decode_lookahead;  // each its token, and its proposals to verify
    if (limits_.chunked) {
      if (decoding < running_.size()) continue_prefills(chunks, budget);
      if (may_admit) admit(chunks, budget);
    }
    if (limits_.prefill_pauses_decode && !chunks.empty()) {
      run_step(chunks, false);
      continue;
    }
    if (chunks.empty() && decoding == 0) {
      if (running_.size() > 1) {
        preempt_last();  // prompts stalled for blocks: the newest gives its blocks back
        continue;
      }
      reject_alone();
      continue;
    }
    if (chunks.empty() && decoding == running_.size()) {  // decode only (admission adds chunks)
      StepComposition probe;
      probe.decode_sequences = static_cast<int>(running_.size());
      AttendedSum attended(model_);
      int to_first_finish = 1 << 30;
      for (Sequence& s : running_) {
        attended.add_twice(2 * int64_t{s.cached});
        to_first_finish = std::min(to_first_finish, steps_to_first_finish(s));
        // The first step's blocks, taken by grow_decodes, go back: run_decodes
        // takes the run's (a full reservation is held to the end).
        if (limits_.reserves_full_kv) continue;
        const int64_t had = own_blocks(s, s.cached);
        pool_.give(s.blocks - had);
        s.blocks = had;
      }
      probe.decode_attended_tokens = attended.total();
      run_decodes(decode_run_length(timer_.step_s(probe), to_first_finish));
    } else {
      run_step(chunks, true);
    }
  }
  return totals_;
}

}  // namespace

EarlyStop early_stop_for(std::optional<double> max_ttft_s, std::optional<double> max_tpot_s, int percentile, int requests) {
  EarlyStop s;
  if (percentile <= 0 || requests < 1) return s;
  s.max_ttft_s = max_ttft_s.value_or(1e300);
  s.max_tpot_s = max_tpot_s.value_or(1e300);
  const int below = static_cast<int>(std::floor(percentile / 100.0 * (requests - 1)));
  s.late_allowed = requests - below - 1;
  return s;
}

SchedulerTotals run_engine(std::vector<SimRequest>& requests, const ArrivalPattern& arrivals, const EngineLimits& limits, StepTimer& timer,
                           const ModelSpec& m, const EngineProfile& engine, const EarlyStop& stop) {
  return Engine(requests, arrivals, limits, timer, m, engine, stop).run();
}

}  // namespace gpuadvisor
