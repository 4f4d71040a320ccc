// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
#include "gpuadvisor/workload/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "gpuadvisor/base/errors.hpp"
#include "base/json_input.hpp"
#include "gpuadvisor/base/files.hpp"

namespace gpuadvisor {

extern const char* const embedded_models_json;
extern const std::size_t embedded_models_json_size;

using nlohmann::json;

// ---------------------------------------------------------------------------
// Parameter counts (docs/methodology.md §Parameters). Biases and norms'
// scales are tiny; norms are counted (2h per layer + h final), biases are not.

double ModelSpec::attention_params_per_layer() const {
  const double h = hidden;
  if (uses_mla()) {
    const double qk_head = qk_nope_head_dim + qk_rope_head_dim;
    double q = q_lora_rank > 0 ? h * q_lora_rank + double(q_lora_rank) * heads * qk_head : h * heads * qk_head;
    double kv_down = h * (kv_lora_rank + qk_rope_head_dim);
    double kv_up = double(kv_lora_rank) * heads * (qk_nope_head_dim + v_head_dim);
    double out = double(heads) * v_head_dim * h;
    return q + kv_down + kv_up + out;
  }
  const double q_and_o = 2.0 * h * heads * head_dim;
  const double k_and_v = 2.0 * h * kv_heads * head_dim;
  return q_and_o + k_and_v;
}

double ModelSpec::dense_mlp_params() const { return (gated_mlp ? 3.0 : 2.0) * hidden * ffn; }
double ModelSpec::expert_mlp_params() const { return (gated_mlp ? 3.0 : 2.0) * hidden * expert_ffn; }
double ModelSpec::embedding_params() const { return double(vocab) * hidden * (tied_embeddings ? 1 : 2); }
double ModelSpec::expert_params_total() const { return is_moe() ? double(moe_layers()) * experts * expert_mlp_params() : 0; }

static double norm_params(const ModelSpec& m) { return 2.0 * m.hidden * m.layers + m.hidden; }

double ModelSpec::total_params() const {
  double p = layers * attention_params_per_layer() + embedding_params() + norm_params(*this);
  if (!is_moe()) return p + layers * dense_mlp_params();
  p += dense_layers * dense_mlp_params();
  p += moe_layers() * ((experts + shared_experts) * expert_mlp_params() + double(hidden) * experts);
  return p;
}

double ModelSpec::active_params() const {
  if (!is_moe()) return total_params();
  double p = layers * attention_params_per_layer() + embedding_params() + norm_params(*this);
  p += dense_layers * dense_mlp_params();
  p += moe_layers() * ((active_experts + shared_experts) * expert_mlp_params() + double(hidden) * experts);
  return p;
}

void validate_model(const ModelSpec& m) {
  auto need = [&](int v, const char* field) {
    if (v <= 0) throw InputError(fmt::format("model {}: {} must be a positive integer, got {}", m.name, field, v));
  };
  need(m.layers, "layers");
  need(m.hidden, "hidden");
  need(m.heads, "heads");
  need(m.kv_heads, "kv_heads");
  need(m.head_dim, "head_dim");
  need(m.ffn, "ffn");
  need(m.vocab, "vocab");
  if (m.heads % m.kv_heads != 0)
    throw InputError(fmt::format("model {}: heads ({}) must be a multiple of kv_heads ({})", m.name, m.heads, m.kv_heads));
  if (m.layers > kMaxLayers || m.hidden > 1000000 || m.heads > 100000 || m.vocab > 100000000)
    throw InputError(fmt::format("model {}: shape is implausibly large", m.name));
  if (m.is_moe()) {
    need(m.active_experts, "active_experts");
    need(m.expert_ffn, "expert_ffn");
    if (m.active_experts > m.experts)
      throw InputError(fmt::format("model {}: active_experts ({}) exceeds experts ({})", m.name, m.active_experts, m.experts));
    if (m.dense_layers < 0 || m.dense_layers >= m.layers)
      throw InputError(fmt::format("model {}: dense_layers must be in [0, layers)", m.name));
  }
  if (m.sliding_layers < 0 || m.sliding_layers > m.layers || (m.sliding_layers > 0 && m.sliding_window <= 0))
    throw InputError(fmt::format("model {}: sliding_layers must be in [0, layers] with a positive sliding_window", m.name));
  double p = m.total_params();
  if (!(p > 0) || p > kMaxParams)
    throw InputError(fmt::format("model {}: {:.3g} parameters is outside the supported range (up to {:.0e})", m.name, p, kMaxParams));
}

// ---------------------------------------------------------------------------
// Presets.

namespace {

int get_int(const json& j, const char* key, const std::string& where, int fallback = -1) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) {
    if (fallback >= 0) return fallback;
    throw InputError(fmt::format("{}: field '{}' is missing", where, key));
  }
  if (!it->is_number_integer()) throw InputError(fmt::format("{}: field '{}': expected an integer, got {}", where, key, json_excerpt(*it)));
  long long v = it->get<long long>();
  if (v < 0 || v > 100000000) throw InputError(fmt::format("{}: field '{}': {} is out of range", where, key, v));
  return static_cast<int>(v);
}

bool get_bool(const json& j, const char* key, const std::string& where, bool fallback) {
  auto it = j.find(key);
  if (it == j.end() || it->is_null()) return fallback;
  if (!it->is_boolean()) throw InputError(fmt::format("{}: field '{}': expected true or false", where, key));
  return it->get<bool>();
}

// A non-negative number, or 0 when absent (rope_theta is a float in config.json).
double get_number(const json& j, const char* key, const std::string& where) {
  const auto it = j.find(key);
  if (it == j.end() || it->is_null()) return 0;
  if (!it->is_number() || it->get<double>() < 0) throw InputError(fmt::format("{}: field '{}': expected a non-negative number, got {}", where, key, json_excerpt(*it)));
  return it->get<double>();
}

// A model shape from a JSON object with the data/models.json keys.
ModelSpec spec_from_json(const json& j, const std::string& where) {
  if (!j.is_object()) throw InputError(fmt::format("{}: expected an object with the model's shape", where));
  static const std::vector<std::string> kShapeKeys{
      "name", "source", "layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab", "tied_embeddings", "gated_mlp",
      "experts", "active_experts", "shared_experts", "expert_ffn", "dense_layers", "expert_bias", "clamped_glu", "q_lora_rank",
      "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "sliding_window", "sliding_layers", "native_weights",
      "context_length", "context_source", "rope_theta", "learned_positions", "activation", "instruct", "instruct_source", "fp8_instruct", "fp8_instruct_source", "reasoning", "reasoning_source"};
  if (auto u = unknown_key(j, kShapeKeys)) throw InputError(fmt::format("{}: field '{}': {}", where, u->key, u->message));
  ModelSpec m;
  m.name = j.contains("name") && j["name"].is_string() ? j["name"].get<std::string>() : "custom";
  m.source = j.contains("source") && j["source"].is_string() ? j["source"].get<std::string>() : "";
  m.layers = get_int(j, "layers", where);
  m.hidden = get_int(j, "hidden", where);
  m.heads = get_int(j, "heads", where);
  m.kv_heads = get_int(j, "kv_heads", where, m.heads);
  m.head_dim = get_int(j, "head_dim", where, m.heads > 0 ? m.hidden / m.heads : 0);
  m.ffn = get_int(j, "ffn", where);
  m.vocab = get_int(j, "vocab", where);
  m.tied_embeddings = get_bool(j, "tied_embeddings", where, false);
  m.gated_mlp = get_bool(j, "gated_mlp", where, true);
  m.experts = get_int(j, "experts", where, 0);
  m.active_experts = get_int(j, "active_experts", where, 0);
  m.shared_experts = get_int(j, "shared_experts", where, 0);
  m.expert_ffn = get_int(j, "expert_ffn", where, 0);
  m.dense_layers = get_int(j, "dense_layers", where, 0);
  m.expert_bias = get_bool(j, "expert_bias", where, false);
  m.clamped_glu = get_bool(j, "clamped_glu", where, false);
  m.q_lora_rank = get_int(j, "q_lora_rank", where, 0);
  m.kv_lora_rank = get_int(j, "kv_lora_rank", where, 0);
  m.qk_rope_head_dim = get_int(j, "qk_rope_head_dim", where, 0);
  m.qk_nope_head_dim = get_int(j, "qk_nope_head_dim", where, 0);
  m.v_head_dim = get_int(j, "v_head_dim", where, 0);
  m.sliding_window = get_int(j, "sliding_window", where, 0);
  m.sliding_layers = get_int(j, "sliding_layers", where, 0);
  if (j.contains("native_weights") && j["native_weights"].is_string()) m.native_weights = j["native_weights"].get<std::string>();
  m.context_length = get_int(j, "context_length", where, 0);
  m.rope_theta = get_number(j, "rope_theta", where);
  m.learned_positions = get_bool(j, "learned_positions", where, false);
  if (j.contains("activation") && j["activation"].is_string()) m.activation = j["activation"].get<std::string>();
  if (j.contains("instruct") && j["instruct"].is_string()) m.instruct_id = j["instruct"].get<std::string>();
  if (j.contains("fp8_instruct") && j["fp8_instruct"].is_string()) m.fp8_instruct_id = j["fp8_instruct"].get<std::string>();
  m.reasoning = get_bool(j, "reasoning", where, false);
  try {
    validate_model(m);
  } catch (const InputError& e) {  // say where the shape was written: the file and case
    throw InputError(fmt::format("{}: {}", where, e.what()));
  }
  return m;
}

std::vector<ModelSpec> load_presets() {
  json doc = json::parse(std::string_view(embedded_models_json, embedded_models_json_size));
  std::vector<ModelSpec> out;
  for (const auto& j : doc.at("models")) out.push_back(spec_from_json(j, "data/models.json " + j.at("name").get<std::string>()));
  return out;
}

}  // namespace

const std::vector<ModelSpec>& model_presets() {
  static const std::vector<ModelSpec> presets = load_presets();
  return presets;
}

const ModelSpec* find_model_preset(std::string_view name) {
  for (const auto& m : model_presets())
    if (m.name == name) return &m;
  return nullptr;
}

// ---------------------------------------------------------------------------
// Hugging Face config.json.

ModelSpec model_from_shape_json(const std::string& json_object, const std::string& where) {
  ModelSpec m = spec_from_json(parse_json_input(json_object, where), where);
  if (m.total_params() < kMinConfigParams)  // as --params and a config.json: a typo, not a model anyone measured
    throw InputError(fmt::format("{}: {:.3g} parameters is below the {:.0e} a foundation model has", where, m.total_params(), kMinConfigParams));
  return m;
}

ModelSpec model_from_hf_config(const std::string& path, std::vector<std::string>& warnings) {
  return model_from_hf_config_text(read_input_file(path, "a config.json"), path, warnings);
}

namespace {

// Integers listed under `key` (e.g. mlp_only_layers), or none.
std::vector<int> int_list(const json& j, const char* key, const std::string& where) {
  std::vector<int> out;
  if (!j.contains(key) || j[key].is_null()) return out;
  if (!j[key].is_array()) throw InputError(fmt::format("{}: field '{}': expected a list", where, key));
  if (j[key].size() > static_cast<size_t>(kMaxLayers))
    throw InputError(fmt::format("{}: field '{}': {} entries, more than the {} layers any model has", where, key, j[key].size(), kMaxLayers));
  for (const auto& v : j[key]) {
    if (!v.is_number_integer()) throw InputError(fmt::format("{}: field '{}': expected integers", where, key));
    out.push_back(v.get<int>());
  }
  return out;
}

// Which layers of an MoE model are dense (docs/methodology.md §Parameters):
// DeepSeek's leading first_k_dense_replace, Llama 4's interleave_moe_layer_step
// (every k-th layer is MoE), Qwen-MoE's decoder_sparse_step and mlp_only_layers.
int dense_layer_count(const json& t, const std::string& type, int layers, const std::string& where, std::vector<std::string>& notes) {
  if (t.contains("first_k_dense_replace")) return get_int(t, "first_k_dense_replace", where, 0);
  const int step = get_int(t, "interleave_moe_layer_step", where, get_int(t, "decoder_sparse_step", where, 1));
  if (step < 1) throw InputError(fmt::format("{}: the MoE layer step must be at least 1", where));
  const std::vector<int> listed = int_list(t, "mlp_only_layers", where);
  const std::set<int> mlp_only(listed.begin(), listed.end());
  for (const int i : listed)
    if (i < 0 || i >= layers) throw InputError(fmt::format("{}: mlp_only_layers: layer {} is not one of the {} layers", where, i, layers));
  int moe = 0;
  for (int i = 0; i < layers; ++i)
    if ((i + 1) % step == 0 && !mlp_only.count(i)) ++moe;
  if (moe == 0) throw InputError(fmt::format("{}: an MoE config whose layers are all dense", where));
  if (moe < layers) notes.push_back(fmt::format("{} of {} layers are MoE ({}), the rest dense", moe, layers, type));
  return layers - moe;
}

// Local attention: layer_types (sliding or chunked entries), Gemma 3's
// sliding_window_pattern, Gemma 2's alternation, Llama 4's chunked layers
// (three of every four), or a model-wide window (Mistral, Mixtral).
void read_local_attention(const json& t, const std::string& type, ModelSpec& m, const std::string& where) {
  const int window = get_int(t, "sliding_window", where, get_int(t, "attention_chunk_size", where, 0));
  if (window <= 0) return;
  int local = 0;
  std::string how;
  if (t.contains("layer_types") && t["layer_types"].is_array()) {
    if (t["layer_types"].size() != static_cast<size_t>(m.layers))
      throw InputError(fmt::format("{}: layer_types lists {} layers, num_hidden_layers says {}", where, t["layer_types"].size(), m.layers));
    for (const auto& x : t["layer_types"])
      if (x.is_string() && (x.get<std::string>() == "sliding_attention" || x.get<std::string>() == "chunked_attention")) ++local;
    how = "from layer_types";
  } else if (type == "gemma3_text" || type == "gemma3") {
    const int pattern = get_int(t, "sliding_window_pattern", where, 6);
    local = pattern > 0 ? m.layers - m.layers / pattern : 0;
    how = fmt::format("one full layer in {} (sliding_window_pattern)", pattern);
  } else if (type == "gemma2") {
    local = m.layers / 2;
    how = "alternating (Gemma 2)";
  } else if (type == "llama4_text" || type == "llama4") {
    local = m.layers - m.layers / 4;
    how = "chunked attention on three of every four layers, Llama 4's default no_rope_layers";
  } else if (type == "mistral" || type == "mixtral") {
    if (t.contains("use_sliding_window") && t["use_sliding_window"].is_boolean() && !t["use_sliding_window"].get<bool>()) return;
    local = m.layers;
    how = "every layer";
  } else {
    return;  // e.g. Qwen2/3 carry sliding_window with use_sliding_window false
  }
  m.sliding_window = window;
  m.sliding_layers = std::clamp(local, 0, m.layers);
  if (m.sliding_layers > 0)
    m.assumptions.push_back(fmt::format("{} of {} layers attend to the last {} tokens only ({}): their KV cache and attention stop growing there",
                                        m.sliding_layers, m.layers, window, how));
}

// The MoE part of a config: experts, their width, shared experts, dense layers.
void read_moe(const json& t, const std::string& type, ModelSpec& m, const std::string& where, std::vector<std::string>& warnings) {
  const int local_experts = get_int(t, "num_local_experts", where, get_int(t, "num_experts", where, 0));
  const int routed = get_int(t, "n_routed_experts", where, 0);
  if (local_experts > 0 && routed > 0)
    warnings.push_back(fmt::format("{}: both num_local_experts and n_routed_experts are set; using n_routed_experts", where));
  m.experts = routed > 0 ? routed : local_experts;
  if (m.experts == 0) {
    if (t.contains("num_experts_per_tok"))
      warnings.push_back(fmt::format("{}: num_experts_per_tok is set but no expert count: treated as a dense model", where));
    return;
  }
  m.active_experts = get_int(t, !t.contains("num_experts_per_tok") && t.contains("experts_per_token") ? "experts_per_token" : "num_experts_per_tok", where);
  m.shared_experts = get_int(t, "n_shared_experts", where, 0);
  if (type == "llama4_text" || type == "llama4") {
    // Llama 4: experts are intermediate_size wide, dense layers intermediate_size_mlp; one shared expert (no key).
    m.expert_ffn = m.ffn;
    m.ffn = get_int(t, "intermediate_size_mlp", where, m.ffn);
    m.shared_experts = 1;
    m.assumptions.push_back("Llama 4 MoE layers have one shared expert beside the routed ones (Llama4TextMoe; no config key)");
  } else {
    m.expert_ffn = get_int(t, "moe_intermediate_size", where, m.ffn);
  }
  m.dense_layers = dense_layer_count(t, type, m.layers, where, m.assumptions);
}

// GPT-OSS: GptOssExperts always carries biases (no config key); the GLU
// clamps its inputs where swiglu_limit is set.
void read_expert_mlp_extras(const json& t, const std::string& type, ModelSpec& m) {
  if (!m.is_moe()) return;
  m.expert_bias = type == "gpt_oss";
  const auto limit = t.find("swiglu_limit");
  m.clamped_glu = limit != t.end() && limit->is_number() && limit->get<double>() > 0;
  if (m.expert_bias) m.assumptions.push_back("gpt_oss: the expert matrices carry biases (GptOssExperts; no config key)");
}

// The checkpoint's own weight format from quantization_config: fp8 (DeepSeek-V3),
// mxfp4 (GPT-OSS), GPTQ/AWQ with 4 or 8 bits.
void read_native_weights(const json& t, ModelSpec& m) {
  if (!t.contains("quantization_config") || !t["quantization_config"].is_object()) return;
  const json& q = t["quantization_config"];
  const std::string method = q.contains("quant_method") && q["quant_method"].is_string() ? q["quant_method"].get<std::string>() : "";
  const int bits = q.contains("bits") && q["bits"].is_number_integer() ? q["bits"].get<int>() : 0;
  if (method == "fp8") m.native_weights = "fp8";
  else if (method == "mxfp4") m.native_weights = "fp4";
  else if ((method == "gptq" || method == "awq") && (bits == 4 || bits == 8)) m.native_weights = bits == 4 ? "int4" : "int8";
  if (!m.native_weights.empty())
    m.assumptions.push_back(fmt::format("the checkpoint is stored in {} (quantization_config: {}); serving uses it unless --weights says otherwise",
                                        m.native_weights, method));
}

}  // namespace

ModelSpec model_from_hf_config_text(const std::string& text, const std::string& path, std::vector<std::string>& warnings) {
  const json outer = parse_json_input(text, path);
  if (!outer.is_object()) throw InputError(fmt::format("{}: expected a JSON object", path));
  // Multimodal configs (Llama 4, Gemma 3) nest the language model in text_config.
  const bool nested = outer.contains("text_config") && outer["text_config"].is_object();
  const json& j = nested ? outer["text_config"] : outer;

  // Keys that shape the estimate, and keys known not to (no warning for those).
  static const std::set<std::string> used{
      "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "intermediate_size",
      "vocab_size", "tie_word_embeddings", "head_dim", "hidden_act", "num_local_experts", "num_experts_per_tok",
      "n_routed_experts", "n_shared_experts", "moe_intermediate_size", "first_k_dense_replace", "q_lora_rank",
      "kv_lora_rank", "qk_rope_head_dim", "qk_nope_head_dim", "v_head_dim", "model_type", "architectures",
      "num_experts", "max_position_embeddings", "interleave_moe_layer_step", "intermediate_size_mlp", "decoder_sparse_step",
      "mlp_only_layers", "sliding_window", "layer_types", "sliding_window_pattern", "attention_chunk_size", "no_rope_layers",
      "experts_per_token", "use_sliding_window", "swiglu_limit", "rope_theta"};
  static const std::set<std::string> ignored{
      "_name_or_path", "attention_bias", "attention_dropout", "bos_token_id", "eos_token_id", "pad_token_id",
      "initializer_range", "rms_norm_eps", "layer_norm_eps", "layer_norm_epsilon", "rope_scaling",
      "torch_dtype", "transformers_version", "use_cache", "pretraining_tp", "sliding_window", "use_sliding_window",
      "max_window_layers", "mlp_bias", "output_router_logits", "router_aux_loss_coef", "router_jitter_noise",
      "rotary_pct", "rotary_emb_base", "use_parallel_residual", "hidden_dropout", "classifier_dropout",
      "bias", "quantization_config", "aux_loss_alpha", "ep_size", "moe_layer_freq", "n_group", "topk_group",
      "topk_method", "norm_topk_prob", "routed_scaling_factor", "scoring_func", "seq_aux", "num_nextn_predict_layers",
      "auto_map", "dtype", "is_decoder", "rope_interleave", "attn_implementation", "use_qk_norm", "query_pre_attn_scalar",
      "initial_context_length", "for_llm_compressor", "attn_logit_softcapping", "final_logit_softcapping",
      "rope_local_base_freq", "cache_implementation"};
  for (auto it = j.begin(); it != j.end(); ++it)
    if (!used.count(it.key()) && !ignored.count(it.key()))
      warnings.push_back(fmt::format("{}: key '{}' is not understood and was not used", path, it.key()));

  ModelSpec m;
  if (nested) m.assumptions.push_back("the language model (text_config) is counted; the vision encoder is not");
  m.name = outer.contains("_name_or_path") && outer["_name_or_path"].is_string() && !outer["_name_or_path"].get<std::string>().empty()
               ? outer["_name_or_path"].get<std::string>()
               : path;
  // The name goes into terminals, tables and the launch files' comment lines: no control characters.
  if (std::any_of(m.name.begin(), m.name.end(), [](char ch) { return static_cast<unsigned char>(ch) < 0x20 || ch == 0x7f; }))
    throw InputError(fmt::format("{}: field '_name_or_path' holds a control character (a newline or escape); a model name is one line", path));
  m.source = path;
  const std::string where = path;
  auto text_field = [&](const char* key, const std::string& fallback) {
    if (!j.contains(key) || j[key].is_null()) return fallback;
    if (!j[key].is_string()) throw InputError(fmt::format("{}: field '{}': expected a string", path, key));
    return j[key].get<std::string>();
  };
  std::string model_type = text_field("model_type", "unknown");
  const bool gemma3 = model_type == "gemma3_text" || model_type == "gemma3";
  m.layers = get_int(j, "num_hidden_layers", where);
  if (m.layers > kMaxLayers)  // before any per-layer work (MoE layer lists), which would otherwise spin
    throw InputError(fmt::format("{}: num_hidden_layers {} is more than the {} any model has", path, m.layers, kMaxLayers));
  m.hidden = get_int(j, "hidden_size", where);
  m.heads = get_int(j, "num_attention_heads", where);
  if (!j.contains("head_dim") && m.heads > 0 && m.hidden % m.heads != 0)
    throw InputError(fmt::format("{}: hidden_size {} is not divisible by num_attention_heads {}, and no head_dim is given", path, m.hidden,
                                 m.heads));
  m.kv_heads = get_int(j, "num_key_value_heads", where, m.heads);
  if (!j.contains("num_key_value_heads"))
    m.assumptions.push_back("num_key_value_heads absent: assumed equal to num_attention_heads (multi-head attention)");
  m.head_dim = get_int(j, "head_dim", where, m.heads > 0 ? m.hidden / m.heads : 0);
  if (j.contains("head_dim") && m.head_dim * m.heads != m.hidden)
    m.assumptions.push_back(fmt::format("attention width from head_dim: {} heads x {} = {}, not hidden_size {}", m.heads, m.head_dim,
                                        m.heads * m.head_dim, m.hidden));
  m.ffn = get_int(j, "intermediate_size", where, 4 * m.hidden);
  if (!j.contains("intermediate_size")) m.assumptions.push_back("intermediate_size absent: assumed 4 x hidden_size");
  // Gemma 3's text_config leaves out what Gemma3TextConfig defaults (vocab 262,208, tied embeddings).
  m.vocab = get_int(j, "vocab_size", where, gemma3 ? 262208 : -1);
  if (gemma3 && !j.contains("vocab_size")) m.assumptions.push_back("vocab_size absent: Gemma3TextConfig's default 262,208");
  const bool neox = model_type == "gpt_neox" || model_type == "gpt2" || model_type == "gptj";
  m.tied_embeddings = get_bool(j, "tie_word_embeddings", where, gemma3 || get_bool(outer, "tie_word_embeddings", where, false));
  std::string act = text_field("hidden_act", neox ? "gelu" : "silu");
  m.gated_mlp = !(neox || act == "gelu" || act == "gelu_new" || act == "relu2" || act == "gelu_pytorch_tanh") ||
                model_type == "gemma" || model_type == "gemma2" || gemma3;
  // What the launch files need (docs/launch.md): vLLM's default --max-model-len is this context length.
  m.context_length = get_int(j, "max_position_embeddings", where, 0);
  m.rope_theta = get_number(j, "rope_theta", where);
  m.learned_positions = model_type == "gpt2" || model_type == "gpt_bigcode" || model_type == "opt";
  m.activation = act == "gelu_pytorch_tanh" || act == "gelu_new" ? "gelu_tanh" : act;
  read_moe(j, model_type, m, where, warnings);
  read_local_attention(j, model_type, m, where);
  read_expert_mlp_extras(j, model_type, m);
  read_native_weights(j.contains("quantization_config") ? j : outer, m);
  m.q_lora_rank = get_int(j, "q_lora_rank", where, 0);
  m.kv_lora_rank = get_int(j, "kv_lora_rank", where, 0);
  m.qk_rope_head_dim = get_int(j, "qk_rope_head_dim", where, 0);
  m.qk_nope_head_dim = get_int(j, "qk_nope_head_dim", where, 0);
  m.v_head_dim = get_int(j, "v_head_dim", where, 0);
  if (m.kv_lora_rank > 0 && (m.qk_nope_head_dim == 0 || m.v_head_dim == 0))
    throw InputError(fmt::format("{}: kv_lora_rank is set but qk_nope_head_dim or v_head_dim is missing", path));
  try {
    validate_model(m);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", path, e.what()));
  }
  if (m.total_params() < kMinConfigParams)  // as --params: a model this small is a typo, not a job to rent for
    throw InputError(fmt::format("{}: {:.3g} parameters is below the {:.0e} a foundation model has", path, m.total_params(), kMinConfigParams));
  return m;
}

// ---------------------------------------------------------------------------
// Shape from a bare parameter count.

ModelSpec model_from_param_count(double params) {
  if (!(params > 0) || params > kMaxParams)
    throw InputError(fmt::format("--params: {:.3g} is outside the supported range (up to {:.0e})", params, kMaxParams));
  // Nearest dense preset with grouped-query or multi-head attention, by log distance.
  const ModelSpec* nearest = nullptr;
  double best = 1e300;
  for (const auto& p : model_presets()) {
    if (p.is_moe() || p.uses_mla() || !p.gated_mlp) continue;
    double d = std::fabs(std::log(params / p.total_params()));
    if (d < best) best = d, nearest = &p;
  }
  ModelSpec m = *nearest;
  const double ratio = params / nearest->total_params();
  // Scale width and depth together (ratio^(1/3) each, so per-layer params grow
  // as ratio^(2/3)); keep head_dim and the FFN ratio.
  if (std::fabs(std::log(ratio)) > std::log(1.15)) {
    const double s = std::cbrt(ratio);
    const double scaled_heads = nearest->heads * s;
    const int group = nearest->heads / nearest->kv_heads;
    // Published models have head counts in multiples of 8 (a count like 17
    // divides over no tensor-parallel degree), and grouped-query models keep
    // their KV heads across sizes (Llama 3: 8 at 8B, 70B and 405B).
    const bool keep_kv = group > 1 && scaled_heads >= std::lcm(nearest->kv_heads, 8);
    const int step = keep_kv ? std::lcm(nearest->kv_heads, 8) : scaled_heads >= 8 ? std::lcm(group, 8) : group;
    const int heads = std::max(step, static_cast<int>(std::lround(scaled_heads / step)) * step);
    m.heads = heads;
    m.kv_heads = keep_kv ? nearest->kv_heads : heads / group;
    m.hidden = heads * m.head_dim;
    m.ffn = static_cast<int>(std::lround(double(nearest->ffn) / nearest->hidden * m.hidden / 256.0)) * 256;
    if (m.ffn <= 0) m.ffn = 256;
  }
  // Solve the layer count for the requested total.
  ModelSpec one = m;
  one.layers = 1;
  const double fixed = m.embedding_params() + m.hidden;
  const double per_layer = one.total_params() - fixed;
  m.layers = std::max(1, static_cast<int>(std::lround((params - fixed) / per_layer)));
  m.name = params >= 1e12 ? fmt::format("{:.4g}T-param model", params / 1e12) : fmt::format("{:.4g}B-param model", params / 1e9);
  m.source = fmt::format("shape scaled from {} ({})", nearest->name, nearest->source);
  m.instruct_id.clear();  // a scaled shape is no published checkpoint
  m.fp8_instruct_id.clear();
  m.assumptions.push_back(fmt::format(
      "shape assumed from the nearest preset {}, scaled to {} layers, hidden {}, {} heads ({} KV), FFN {}, vocabulary {} "
      "({:.2f}B parameters); override with --layers/--hidden/--heads/--kv-heads/--vocab or use --model",
      nearest->name, m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, m.vocab, m.total_params() / 1e9));
  validate_model(m);
  return m;
}

void apply_overrides(ModelSpec& m, const ShapeOverrides& o) {
  bool changed = false;
  if (o.layers) {
    // What the preset says per layer scales with the depth: its local-attention and dense (non-MoE) layers.
    const double scale = double(o.layers) / m.layers;
    m.sliding_layers = std::min(o.layers, static_cast<int>(std::lround(m.sliding_layers * scale)));
    if (m.is_moe()) m.dense_layers = std::min(o.layers - 1, static_cast<int>(std::lround(m.dense_layers * scale)));
    m.layers = o.layers, changed = true;
  }
  if (o.heads) {
    if (!o.kv_heads && o.heads % m.kv_heads != 0) {
      m.assumptions.push_back(fmt::format("KV heads set to {} (the preset's {} do not divide {} heads)", o.heads, m.kv_heads, o.heads));
      m.kv_heads = o.heads;
    }
    m.heads = o.heads;
    changed = true;
  }
  if (o.hidden) {
    // The MLP widths keep their ratio to the hidden size.
    const double scale = double(o.hidden) / m.hidden;
    m.ffn = static_cast<int>(std::lround(m.ffn * scale));
    if (m.expert_ffn > 0) m.expert_ffn = static_cast<int>(std::lround(m.expert_ffn * scale));
    m.hidden = o.hidden;
    changed = true;
  }
  if (o.kv_heads) {
    if (m.heads % o.kv_heads != 0)
      throw InputError(fmt::format("--kv-heads {} does not divide the {} attention heads{}", o.kv_heads, m.heads, o.heads ? "" : " (set --heads too)"));
    m.kv_heads = o.kv_heads, changed = true;
  }
  if (o.vocab) m.vocab = o.vocab, changed = true;
  if (o.hidden || o.heads) m.head_dim = m.hidden / m.heads;
  if (changed) {
    m.instruct_id.clear();  // an overridden shape is no longer the published checkpoint's
    m.fp8_instruct_id.clear();
    if (m.hidden % m.heads != 0)
      throw InputError(fmt::format("--hidden {} is not divisible by --heads {}", m.hidden, m.heads));
    m.assumptions.push_back(fmt::format("shape overridden: {} layers, hidden {}, {} heads ({} KV), FFN {}, vocabulary {} ({:.2f}B parameters)",
                                        m.layers, m.hidden, m.heads, m.kv_heads, m.ffn, m.vocab, m.total_params() / 1e9));
    if (o.layers && m.sliding_layers > 0)
      m.assumptions.push_back(fmt::format("local-attention layers rescaled with the depth: {} of {}", m.sliding_layers, m.layers));
    if (o.layers && m.is_moe() && m.dense_layers > 0)
      m.assumptions.push_back(fmt::format("dense (non-MoE) layers rescaled with the depth: {} of {}", m.dense_layers, m.layers));
  }
  validate_model(m);
}

}  // namespace gpuadvisor
