// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
#include "gpuadvisor/workload/engine.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <regex>
#include <set>

#include "gpuadvisor/base/errors.hpp"
#include "gpuadvisor/base/named.hpp"
#include "gpuadvisor/base/names.hpp"
#include "gpuadvisor/base/quantity.hpp"
#include "base/json_input.hpp"

namespace gpuadvisor {

extern const char* const embedded_engines_json;
extern const std::size_t embedded_engines_json_size;

std::string_view embedded_engines_text() { return {embedded_engines_json, embedded_engines_json_size}; }

using nlohmann::json;

namespace {

struct EngineReader {
  std::string origin, name;
  [[noreturn]] void fail(const std::string& field, const std::string& what) const {
    throw InputError(fmt::format("{}: engine {}: field '{}': {}", origin, name.empty() ? "?" : name, field, what));
  }
  double number(const json& j, const char* key, double lo, double hi) const {
    if (!j.contains(key) || !j[key].is_number()) fail(key, "expected a number");
    const double v = j[key].get<double>();
    if (!(v >= lo && v <= hi)) fail(key, fmt::format("{} is outside [{}, {}]", v, lo, hi));
    return v;
  }
  std::string text(const json& j, const char* key) const {
    if (!j.contains(key) || !j[key].is_string()) fail(key, "expected a string");
    return j[key].get<std::string>();
  }
};

std::vector<std::string> accelerator_names(const EngineReader& r, const json& j, const char* key, const char* field) {
  std::vector<std::string> out;
  if (!j.contains(key)) return out;
  if (!j[key].is_array()) r.fail(field, fmt::format("{}: expected a list of accelerator names", key));
  for (const auto& x : j[key]) {
    if (!x.is_string()) r.fail(field, fmt::format("{}: expected a list of accelerator names", key));
    out.push_back(x.get<std::string>());
  }
  return out;
}

// "prefill_chunk_tokens": N, or {"default": N, "tiers": [{"from_gib": G, "tokens": N}, ...], "excludes": [names]}.
void read_prefill_chunk(const EngineReader& r, const json& j, EngineProfile& e) {
  const char* key = "prefill_chunk_tokens";
  if (j.contains(key) && j[key].is_object()) {
    const json& o = j[key];
    e.prefill_chunk_tokens = static_cast<int>(r.number(o, "default", 16, 1 << 20));
    if (o.contains("tiers") && !o["tiers"].is_array()) r.fail(key, "tiers: expected a list of {\"from_gib\": GiB, \"tokens\": N}");
    for (const auto& t : o.value("tiers", json::array())) {
      if (!t.is_object()) r.fail(key, "tiers: expected a list of {\"from_gib\": GiB, \"tokens\": N}");
      const EngineProfile::MemoryTier tier{r.number(t, "from_gib", 1, 1e5), static_cast<int>(r.number(t, "tokens", 16, 1 << 20))};
      if (!e.prefill_chunk_tiers.empty() && tier.from_gib <= e.prefill_chunk_tiers.back().from_gib) r.fail(key, "tiers: from_gib must ascend");
      e.prefill_chunk_tiers.push_back(tier);
    }
    e.prefill_chunk_excludes = accelerator_names(r, o, "excludes", key);
    return;
  }
  e.prefill_chunk_tokens = static_cast<int>(r.number(j, key, 16, 1 << 20));
}

// A true/false field that may be left out (false).
bool optional_flag(const EngineReader& r, const json& j, const char* key) {
  if (!j.contains(key)) return false;
  if (!j[key].is_boolean()) r.fail(key, "expected true or false");
  return j[key].get<bool>();
}

// "0.14", "v0.20.1", "1.3.0rc14", "0.13c1", "0.13.0.dev1", "0.13-1",
// "0.20.1+cu128", "v0.7.3-cu121": 1 to 4 numbers, then at most one
// pre-release, one post- and one dev-release tag in PEP 440's order and
// spellings (rc, c, pre, preview, a, alpha, b, beta; post, rev, r, or an
// implicit post-release "-1"; dev; each after an optional ".", "_" or "-"),
// and a local label, or a container tag's build suffix after "-" (a letter
// first); nullopt for anything else.
std::optional<std::vector<int>> parse_release(std::string_view text) {
  static const std::regex shape(
      R"(v?(\d{1,6}(?:\.\d{1,6}){0,3})(?:[._-]?(?:rc|c|preview|pre|alpha|a|beta|b)\d{0,6})?(?:-\d{1,6}|[._-]?(?:post|rev|r)\d{0,6})?(?:[._-]?dev\d{0,6})?(?:\+[A-Za-z0-9._-]{1,32}|-[A-Za-z][A-Za-z0-9._-]{0,31})?)",
      std::regex::icase);
  std::match_results<std::string_view::const_iterator> match;
  if (text.size() > 64 || !std::regex_match(text.begin(), text.end(), match, shape)) return std::nullopt;
  std::vector<int> parts;
  const std::string numbers = match[1].str();
  for (std::size_t i = 0; i < numbers.size();) {
    const std::size_t dot = std::min(numbers.find('.', i), numbers.size());
    parts.push_back(std::stoi(numbers.substr(i, dot - i)));
    i = dot + 1;
  }
  return parts;
}

// a < b with missing parts as 0 (0.13.2 < 0.14 = 0.14.0).
bool release_before(const std::vector<int>& a, const std::vector<int>& b) {
  for (std::size_t k = 0; k < std::max(a.size(), b.size()); ++k) {
    const int x = k < a.size() ? a[k] : 0, y = k < b.size() ? b[k] : 0;
    if (x != y) return x < y;
  }
  return false;
}

// "releases": [{"before": "0.14", "title": "...", "step_overhead_ms": 1.5}, ...], ascending; an entry
// may also set "prefix_cache", "max_sequences" (one limit on every accelerator) and
// "chunked_prefill_by_default" (false: the server chunks only when asked).
void read_releases(const EngineReader& r, const json& j, EngineProfile& e) {
  if (!j.contains("releases")) return;
  const char* shape = "expected a list of {\"before\": \"0.14\", \"title\": text, \"step_overhead_ms\": ms}";
  if (!j["releases"].is_array() || j["releases"].empty()) r.fail("releases", shape);
  for (const auto& x : j["releases"]) {
    if (!x.is_object()) r.fail("releases", shape);
    EngineProfile::Release rel;
    const std::string before_text = r.text(x, "before");
    auto before = parse_release(before_text);
    if (!before || before->size() < 2) r.fail("releases", fmt::format("before: '{}' is not a release number such as 0.14", before_text));
    rel.before = *before;
    if (!e.releases.empty() && !release_before(e.releases.back().before, rel.before)) r.fail("releases", "before must ascend");
    rel.title = r.text(x, "title");
    rel.step_overhead_s = r.number(x, "step_overhead_ms", 0, 1000) / 1e3;
    if (x.contains("prefix_cache")) rel.prefix_cache = optional_flag(r, x, "prefix_cache");
    if (x.contains("max_sequences")) rel.max_sequences = static_cast<int>(r.number(x, "max_sequences", 1, 1 << 20));
    if (x.contains("chunked_prefill_by_default")) rel.chunked_prefill_by_default = optional_flag(r, x, "chunked_prefill_by_default");
    e.releases.push_back(std::move(rel));
  }
}

// Each earlier release's profile: the engine's own with the release's title,
// host time per step, prefix cache and sequence limit.
void make_release_profiles(EngineProfile& e) {
  e.release_profiles.clear();
  for (const EngineProfile::Release& rel : e.releases) {
    EngineProfile p = e;
    p.release_profiles.clear();  // a release has no releases of its own
    p.title = rel.title;
    p.step_overhead_s = rel.step_overhead_s;
    p.prefix_cache = rel.prefix_cache.value_or(e.prefix_cache);
    p.chunked_prefill_by_default = rel.chunked_prefill_by_default.value_or(e.chunked_prefill_by_default);
    if (rel.max_sequences) {
      p.max_sequences = *rel.max_sequences;
      p.max_sequences_large = 0;
    }
    p.releases.clear();
    p.earlier_release = true;
    e.release_profiles.push_back(std::move(p));
  }
}

EngineProfile read_engine(const EngineReader& r, const json& j, const json& sources) {
  EngineProfile e;
  e.name = r.name;
  e.title = r.text(j, "title");
  e.software = r.text(j, "software");
  if (e.software != "cuda" && e.software != "neuron") r.fail("software", "expected cuda or neuron");
  e.step_overhead_s = r.number(j, "step_overhead_ms", 0, 1000) / 1e3;
  e.sequence_overhead_s = r.number(j, "sequence_overhead_us", 0, 1e5) / 1e6;
  e.launch_s_per_layer = r.number(j, "launch_ms_per_layer", 0, 100) / 1e3;
  read_releases(r, j, e);
  e.prefill_launch_s_per_kernel = j.contains("prefill_launch_us_per_kernel") ? r.number(j, "prefill_launch_us_per_kernel", 0, 10000) / 1e6 : 0;
  const std::string prefill = r.text(j, "prefill");
  if (prefill == "chunked") e.prefill = PrefillScheduling::chunked;
  else if (prefill == "separate") e.prefill = PrefillScheduling::separate;
  else r.fail("prefill", "expected chunked or separate");
  e.prefill_pauses_decode = optional_flag(r, j, "prefill_pauses_decode");
  e.ampere_or_newer = optional_flag(r, j, "ampere_or_newer");
  if (e.prefill_pauses_decode && e.prefill != PrefillScheduling::chunked)
    r.fail("prefill_pauses_decode", "only with chunked prefill: a separate prefill pauses the decode batch already");
  read_prefill_chunk(r, j, e);
  e.free_fraction = r.number(j, "free_fraction", 0, 0.9);
  const std::string of = r.text(j, "free_fraction_of");
  if (of != "total" && of != "remaining") r.fail("free_fraction_of", "expected total or remaining");
  e.free_fraction_of_remaining = of == "remaining";
  e.cuda_graph_pool_gb = r.number(j, "cuda_graph_pool_gb", 0, 64);
  e.dequant_ops_per_weight = r.number(j, "dequant_ops_per_weight", 0, 100);
  e.prefill_compute_factor = j.contains("prefill_compute_factor") ? r.number(j, "prefill_compute_factor", 0.01, 1) : 0;
  e.prefill_batching_steps = j.contains("prefill_batching_steps") ? static_cast<int>(r.number(j, "prefill_batching_steps", 0, 1000)) : 0;
  e.waiting_served_ratio = j.contains("waiting_served_ratio") ? r.number(j, "waiting_served_ratio", 0, 100) : 0;
  if (e.waiting_served_ratio > 0 && e.prefill_batching_steps <= 0)
    r.fail("waiting_served_ratio", "holds prompts only with prefill_batching_steps, the most decode steps they wait");
  e.dequant_per_sequence = optional_flag(r, j, "dequant_per_sequence");
  if (!j.contains("continuous_batching") || !j["continuous_batching"].is_boolean()) r.fail("continuous_batching", "expected true or false");
  e.continuous_batching = j["continuous_batching"].get<bool>();
  e.reserves_full_kv = optional_flag(r, j, "reserves_full_kv");
  e.full_length_local_kv = optional_flag(r, j, "full_length_local_kv");
  e.quantised_checkpoint_fp8_kv = optional_flag(r, j, "quantised_checkpoint_fp8_kv");
  e.fp8_kv_needs_fp8_math = optional_flag(r, j, "fp8_kv_needs_fp8_math");
  e.expert_parallel = optional_flag(r, j, "expert_parallel");
  e.prefix_cache = optional_flag(r, j, "prefix_cache");
  e.partial_attention_dp = optional_flag(r, j, "partial_attention_dp");
  if (j.contains("max_sequences")) {
    const json& m = j["max_sequences"];
    if (!m.is_object()) r.fail("max_sequences", "expected {\"default\": N, \"large\": N, \"large_from_gib\": GiB, \"large_excludes\": [names]}");
    e.max_sequences = static_cast<int>(r.number(m, "default", 1, 1 << 20));
    if (m.contains("large")) {
      e.max_sequences_large = static_cast<int>(r.number(m, "large", 1, 1 << 20));
      e.large_from_gib = r.number(m, "large_from_gib", 1, 1e5);
    }
    e.large_excludes = accelerator_names(r, m, "large_excludes", "max_sequences");
  }
  auto formats = [&](const char* key, std::vector<WeightFormat>& out) {
    if (!j.contains(key) || !j[key].is_array()) r.fail(key, "expected a list of weight formats");
    for (const auto& w : j[key]) {
      auto f = w.is_string() ? weight_format_from_string(w.get<std::string>()) : std::nullopt;
      if (!f) r.fail(key, "expected bf16, fp8, int8, int4 or fp4");
      out.push_back(*f);
    }
  };
  formats("weights", e.weights);
  if (e.weights.empty()) r.fail("weights", "an engine serves at least one format");
  formats("weight_only", e.weight_only);
  if (!j.contains("sources") || !j["sources"].is_object() || j["sources"].empty()) r.fail("sources", "each profile names its sources");
  for (auto it = j["sources"].begin(); it != j["sources"].end(); ++it) {
    if (!it->is_string()) r.fail("sources", "expected field: source text");
    const std::string s = it->get<std::string>();
    if (!sources.contains(s.substr(0, s.find(' ')))) r.fail("sources", fmt::format("'{}' is not in the file's sources", s.substr(0, s.find(' '))));
    e.notes.push_back(fmt::format("{}: {}", it.key(), s));
  }
  make_release_profiles(e);
  return e;
}

}  // namespace

std::vector<EngineProfile> read_engines(const std::string& origin, const std::string& text) {
  const json doc = parse_json_input(text, origin);
  if (!doc.is_object() || !doc.contains("engines") || !doc["engines"].is_array())
    throw InputError(fmt::format("{}: expected an object with an 'engines' list", origin));
  const json sources = doc.value("sources", json::object());
  std::vector<EngineProfile> out;
  std::set<std::string> names;
  for (const auto& j : doc["engines"]) {
    EngineReader r{origin, ""};
    if (!j.is_object()) r.fail("name", "expected an object");
    r.name = r.text(j, "name");
    if (!names.insert(r.name).second) r.fail("name", "duplicate engine");
    out.push_back(read_engine(r, j, sources));
  }
  return out;
}

const std::vector<EngineProfile>& engine_profiles() {
  static const std::vector<EngineProfile> profiles = read_engines("<embedded data/engines.json>", std::string(embedded_engines_text()));
  return profiles;
}

const EngineProfile* find_engine(std::string_view name) { return find_named(engine_profiles(), name); }

std::string engine_names() { return joined_names(engine_profiles()); }

const EngineProfile& engine_release(const EngineProfile& e, std::string_view version, std::string_view what) {
  if (e.releases.empty())
    throw InputError(fmt::format("{}: the {} profile's figures do not change with its release; give {} alone{}", what, e.name, e.name,
                                 e.name == "vllm" ? "" : " (vllm@RELEASE takes vLLM's release)"));
  const auto wanted = parse_release(version);
  if (!wanted)
    throw InputError(fmt::format("{}: '{}' is not a release number such as 0.13 or 0.20.1", what, shortened(version, 40)));
  const auto earlier = std::find_if(e.releases.begin(), e.releases.end(), [&](const auto& rel) { return release_before(*wanted, rel.before); });
  if (earlier == e.releases.end()) return e;
  return e.release_profiles.at(static_cast<std::size_t>(earlier - e.releases.begin()));
}

namespace {

bool ends_word(char c) { return std::isspace(static_cast<unsigned char>(c)) || c == ',' || c == ';' || c == '(' || c == ')'; }

// Where the word starting at `i` ends.
std::size_t word_end(std::string_view text, std::size_t i) {
  while (i < text.size() && !ends_word(text[i])) ++i;
  return i;
}

// A release number starts at `i`: a digit, after an optional "v".
bool release_at(std::string_view lower, std::size_t i) {
  if (i < lower.size() && lower[i] == 'v') ++i;
  return i < lower.size() && std::isdigit(static_cast<unsigned char>(lower[i]));
}

}  // namespace

std::optional<std::string> release_number_in(std::string_view text, std::string_view name) {
  const std::string lower = lower_case(std::string(text));
  for (std::size_t at = name.empty() ? std::string::npos : lower.find(name); at != std::string::npos; at = lower.find(name, at + 1)) {
    const std::size_t after = at + name.size(), end = word_end(text, after);
    // In the name's own word, a tag or a pin: "vllm/vllm-openai:v0.7.3", "vllm==0.6.0".
    for (std::size_t k = after; k < end; ++k)
      if (lower[k] == ':' || lower[k] == '=' || lower[k] == '@') {
        std::size_t from = k + 1;
        while (from < end && lower[from] == '=') ++from;
        if (release_at(lower, from)) return std::string(text.substr(from, end - from));
      }
    // Else the next word: "vLLM 0.7.3".
    if (end == after) {
      std::size_t next = after;
      while (next < lower.size() && std::isspace(static_cast<unsigned char>(lower[next]))) ++next;
      if (next > after && release_at(lower, next)) return std::string(text.substr(next, word_end(text, next) - next));
    }
  }
  // A text that does not name the engine: its first word, where that is a number ("0.7.3", "v0.6.0 (...)").
  std::size_t first = 0;
  while (first < lower.size() && std::isspace(static_cast<unsigned char>(lower[first]))) ++first;
  if (lower.find(name) == std::string::npos && release_at(lower, first)) return std::string(text.substr(first, word_end(text, first) - first));
  return std::nullopt;
}

std::string engine_names_where(bool (*has)(const EngineProfile&), std::string_view software) {
  std::string out;
  for (const EngineProfile& e : engine_profiles())
    if (has(e) && (software.empty() || e.software == software)) out += (out.empty() ? "" : ", ") + e.name;
  return out;
}

bool has_prefix_cache(const EngineProfile& e) { return e.prefix_cache; }
bool prefills_in_chunks(const EngineProfile& e) { return e.prefill == PrefillScheduling::chunked; }
bool batches_continuously(const EngineProfile& e) { return e.continuous_batching; }

std::optional<std::string> prefix_share_problem(const EngineProfile& e, std::string_view software) {
  if (e.prefix_cache) return std::nullopt;
  // An earlier release is named by its title: the current profile of its name may have the cache.
  if (e.earlier_release) {
    std::string others;
    for (const EngineProfile& p : engine_profiles())
      if (p.prefix_cache && p.name != e.name && (software.empty() || p.software == software)) others += ", " + p.name;
    return fmt::format("{} ({}) does not reuse a shared prefix as this release runs by default, so every prompt is prefilled whole (a server "
                       "started with its prefix cache switched on is not modelled); give the current release (--engine {}) or another engine "
                       "that reuses one{}",
                       e.name, e.title, e.name, others.empty() ? "" : " (" + others.substr(2) + ")");
  }
  const std::string others = engine_names_where(has_prefix_cache, software);
  if (others.empty())
    return fmt::format("{} has no prefix cache, so every prompt is prefilled whole, and no engine on {} has one here; leave --prefix-share out",
                       e.name, software);
  return fmt::format("{} has no prefix cache, so every prompt is prefilled whole; give an engine that reuses a shared prefix ({})", e.name, others);
}

const EngineProfile& engine_for(const Accelerator& acc, const EngineProfile* chosen) {
  if (chosen) return *chosen;
  static const EngineProfile& neuron = *find_engine(kDefaultNeuronEngine);  // the profiles are static: looked up once
  static const EngineProfile& cuda = *find_engine(kDefaultCudaEngine);
  return acc.is_neuron() ? neuron : cuda;
}

namespace {
bool named_in(const Accelerator& acc, const std::vector<std::string>& names) {
  return std::any_of(names.begin(), names.end(), [&](const std::string& x) { return acc.name.find(x) != std::string::npos; });
}
}  // namespace

int engine_max_sequences(const EngineProfile& e, const Accelerator& acc, int fallback) {
  if (e.max_sequences <= 0) return fallback;
  if (e.max_sequences_large > 0 && acc.memory_usable_gib >= e.large_from_gib && !named_in(acc, e.large_excludes)) return e.max_sequences_large;
  return e.max_sequences;
}

int engine_prefill_chunk_tokens(const EngineProfile& e, const Accelerator& acc) {
  int tokens = e.prefill_chunk_tokens;
  if (named_in(acc, e.prefill_chunk_excludes)) return tokens;
  for (const auto& tier : e.prefill_chunk_tiers)
    if (acc.memory_usable_gib >= tier.from_gib) tokens = tier.tokens;
  return tokens;
}

int step_token_budget(const EngineProfile& e, const Accelerator& acc, const InferenceWorkload& w) {
  return w.max_batched_tokens.value_or(engine_prefill_chunk_tokens(e, acc));
}

std::optional<std::string> engine_problem(const EngineProfile& e, const Accelerator& acc, WeightFormat weights) {
  if (e.software != acc.software)
    return acc.software == "neuron"
               ? fmt::format("engine {} is the CUDA build; {} is a Neuron accelerator: --engine neuron (vLLM or TGI on Neuron) or neuron-direct",
                             e.name, acc.name)
               : fmt::format("engine {} runs on Inferentia and Trainium only; {} is a GPU: --engine {}", e.name, acc.name,
                             engine_names_where([](const EngineProfile& x) { return x.software == "cuda"; }));
  // Every GPU from Ampere on has bf16 tensor cores and none before it does
  // (V100, T4): the architecture the catalog does not name, read from that.
  if (e.ampere_or_newer && !acc.tflops(Precision::bf16))
    return fmt::format("engine {} runs on Ampere and newer GPUs only (its supported hardware: Blackwell, Hopper, Ada Lovelace, Ampere); {} "
                       "predates them: --engine vllm",
                       e.name, acc.name);
  if (std::find(e.weights.begin(), e.weights.end(), weights) == e.weights.end())
    return fmt::format("engine {} does not serve {} weights (--weights bf16, or an engine that does)", e.name, to_string(weights));
  return std::nullopt;
}

}  // namespace gpuadvisor
