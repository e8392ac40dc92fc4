#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace baton::bench_serve {

// One request's input: the prompt text and how many tokens to ask for.
struct Prompt {
  std::string text;
  int32_t max_tokens = 0;
  std::string model;  // the model (or LoRA adapter) to ask; empty: the run's model
};

// `count` prompts of `words` words each, drawn from a fixed list of common English words that
// Llama-style tokenizers encode as one token each, so a prompt is about `words` tokens long.
// Each prompt differs (no shared prefix for a cache to hit); the same seed gives the same
// prompts.
std::vector<Prompt> random_prompts(int64_t count, int32_t words, int32_t max_tokens, uint64_t seed);

// `count` prompts read from `path`, cycling through the file when it has fewer. Two formats:
// JSON Lines of {"prompt": "...", "max_tokens": N (optional)}, or a JSON array of ShareGPT
// records (the first turn, conversations[0].value, is the prompt; records without turns are
// skipped) or of {"prompt": ...} objects. `max_tokens` applies where a record gives none.
// Throws baton::Error naming the file (and line or record) when it cannot be read or parsed.
std::vector<Prompt> load_prompt_dataset(const std::string& path, int64_t count, int32_t max_tokens);

}  // namespace baton::bench_serve
