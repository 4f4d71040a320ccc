// Layer serving: the serving simulator (arrivals, lengths, engine scheduling, KV blocks, metrics); includes physics and below.
// The paged KV cache of one replica: fixed-size blocks handed to sequences as
// their tokens are cached and returned when they finish or are preempted
// (vLLM's PagedAttention block manager; docs/methodology.md §Serving under load).
#pragma once
#include <cstdint>

namespace gpuadvisor {

// vLLM's default block_size on CUDA (16 tokens); SGLang pages single tokens
// and TensorRT-LLM's tokens_per_block is 32: at 16 the rounding lost is under
// one block per sequence in every case.
inline constexpr int kKvBlockTokens = 16;

struct KvBlockPool {
  int64_t total = 0;
  int64_t used = 0;
  static int64_t blocks_for(double tokens) { return static_cast<int64_t>((tokens + kKvBlockTokens - 1) / kKvBlockTokens); }
  int64_t free() const { return total - used; }
  bool take(int64_t n) {
    if (n > free()) return false;
    used += n;
    return true;
  }
  void give(int64_t n) { used -= n; }
};

}  // namespace gpuadvisor
