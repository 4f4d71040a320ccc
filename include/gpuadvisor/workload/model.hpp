// Layer workload: what is run: model shapes, jobs, serving engines, training stacks, Neuron rules; includes catalog and base.
// The model: a transformer's architecture and its parameter counts.
// Presets come from data/models.json (embedded); a Hugging Face config.json
// can be read; a bare parameter count gets a shape from the nearest preset.
#pragma once
#include <algorithm>
#include <string>
#include <string_view>
#include <vector>

namespace gpuadvisor {

struct ModelSpec {
  std::string name;
  std::string source;  // where the architecture figures come from
  int layers = 0;
  int hidden = 0;
  int heads = 0;
  int kv_heads = 0;
  int head_dim = 0;  // per attention head
  int ffn = 0;       // MLP intermediate width (dense layers)
  int vocab = 0;
  bool tied_embeddings = false;
  bool gated_mlp = true;  // SwiGLU-style (3 matrices) vs GeLU/ReLU^2 (2 matrices)
  // Mixture of experts (experts == 0 means dense).
  int experts = 0;
  int active_experts = 0;
  int shared_experts = 0;
  int expert_ffn = 0;     // intermediate width of one expert
  int dense_layers = 0;   // dense layers of an MoE model: DeepSeek's first_k_dense_replace, Llama 4's
                          // interleaved ones, Qwen3-MoE's mlp_only_layers (their MLP is `ffn` wide)
  // GPT-OSS's expert MLPs: biases on the expert matrices (the down
  // projection's is scaled by the router weight, per expert) and a GLU whose
  // inputs are clamped (config.json swiglu_limit). Training pays both as
  // separate elementwise passes (docs/methodology.md §Efficiency).
  bool expert_bias = false;
  bool clamped_glu = false;
  // Multi-head latent attention (DeepSeek); zero means ordinary (GQA/MHA) attention.
  int q_lora_rank = 0;
  int kv_lora_rank = 0;
  int qk_rope_head_dim = 0;
  int qk_nope_head_dim = 0;
  int v_head_dim = 0;
  // Local attention (docs/methodology.md §Parameters): `sliding_layers` of the
  // layers attend to (and cache) only the last `sliding_window` tokens:
  // sliding-window (GPT-OSS, Gemma 2/3, Mistral) or chunked (Llama 4) attention.
  int sliding_window = 0;
  int sliding_layers = 0;
  // The released checkpoint's weight format when it is not 16-bit ("fp8",
  // "fp4", "int8", "int4": config.json quantization_config, or the preset's);
  // serving takes it unless --weights says otherwise.
  std::string native_weights;
  // What the launch files need beyond the shape (docs/launch.md): the longest
  // sequence the checkpoint accepts, in tokens (config.json
  // max_position_embeddings; 0: unknown); the rotary base (rope_theta; 0:
  // unknown); learned absolute positions instead of rotary ones (GPT-2/GPT-3);
  // the MLP activation ("silu", "gelu", "gelu_tanh", "relu2"; empty: silu
  // when gated, else gelu); and the Hugging Face id of the instruct/chat
  // checkpoint a chat service serves (presets; empty: none published).
  int context_length = 0;
  double rope_theta = 0;
  bool learned_positions = false;
  std::string activation;
  std::string instruct_id;
  // The publisher's fp8 checkpoint of it (models.json `fp8_instruct`, with its
  // source), which the launch files serve for --weights fp8.
  std::string fp8_instruct_id;
  // A reasoning model: it writes hidden thinking tokens before its answer by
  // default (models.json `reasoning`, with `reasoning_source`), so a service
  // that counts none is told so (--reasoning-tokens).
  bool reasoning = false;
  // What was assumed rather than given (printed with every answer).
  std::vector<std::string> assumptions;

  bool is_moe() const { return experts > 0; }
  bool uses_mla() const { return kv_lora_rank > 0; }
  std::string mlp_activation() const { return !activation.empty() ? activation : gated_mlp ? "silu" : "gelu"; }
  int moe_layers() const { return is_moe() ? layers - dense_layers : 0; }
  // Width of the query-key dot products per token: heads x head_dim, or with
  // MLA heads x (nope + rope) dims. Attention FLOPs, Q activations and fp8
  // casts all use it.
  double query_width() const {
    return uses_mla() ? double(heads) * (qk_nope_head_dim + qk_rope_head_dim) : double(heads) * head_dim;
  }
  bool every_layer_attends_all() const { return sliding_layers <= 0 || sliding_window <= 0; }
  // Tokens a layer attends to and caches at `context` tokens, averaged over
  // the layers: full layers see all of it, local layers at most the window.
  // Attention FLOPs and KV-cache bytes scale with layers x attended_tokens.
  double attended_tokens(double context) const {
    if (every_layer_attends_all()) return context;
    return attended_tokens_of_sums(context, std::min<double>(context, sliding_window));
  }
  // The same summed over sequences, from the sum of their contexts and the
  // sum of their contexts cut at the window (attended_tokens is linear in
  // the two).
  double attended_tokens_of_sums(double contexts, double windowed_contexts) const {
    if (every_layer_attends_all()) return contexts;
    return ((layers - sliding_layers) * contexts + sliding_layers * windowed_contexts) / layers;
  }

  double attention_params_per_layer() const;
  double dense_mlp_params() const;                    // one dense layer's MLP
  double expert_mlp_params() const;                   // one expert's MLP
  double embedding_params() const;                    // input embedding + untied output head
  double total_params() const;                        // every weight, all experts
  double active_params() const;                       // weights touched per token
  double expert_params_total() const;                 // all routed-expert weights (sharded by EP)
};

// Checks the shape for impossible values; throws InputError naming the field.
void validate_model(const ModelSpec& m);

// Presets from data/models.json.
const std::vector<ModelSpec>& model_presets();
const ModelSpec* find_model_preset(std::string_view name);

// A shape given with data/models.json's keys (layers, hidden, heads, kv_heads,
// head_dim, ffn, vocab, gated_mlp, experts, ...) as a JSON object's text.
ModelSpec model_from_shape_json(const std::string& json_object, const std::string& where);

// Reads a Hugging Face config.json. Unknown keys and contradictions are
// appended to `warnings` (never ignored silently); missing essentials throw.
ModelSpec model_from_hf_config(const std::string& path, std::vector<std::string>& warnings);
// The same from the file's text; `path` names it in messages.
ModelSpec model_from_hf_config_text(const std::string& text, const std::string& path, std::vector<std::string>& warnings);

// A dense shape for `params` parameters scaled from the nearest preset; the
// choice is recorded in `assumptions`.
ModelSpec model_from_param_count(double params);

// Applies explicit overrides (0 = keep) and re-validates.
struct ShapeOverrides {
  int layers = 0, hidden = 0, heads = 0, kv_heads = 0, vocab = 0;
};
void apply_overrides(ModelSpec& m, const ShapeOverrides& o);

inline constexpr double kMaxParams = 1e15;  // 1,000T: larger is refused as absurd
inline constexpr double kMinConfigParams = 1e6;  // a config.json smaller than this is refused, as --params below 1M is
inline constexpr int kMaxLayers = 10000;      // more layers than any model has is refused before any per-layer work

}  // namespace gpuadvisor
