#include <cstdlib>
#include <cstring>
#include <string>

#include "baton/baton.h"
#include "baton/error.h"
#include "baton/llm.h"
#include "baton/structured_output.h"

struct baton_model {
  baton::LLM llm;
};

namespace {

thread_local std::string last_error;

baton_status status_of(baton::ErrorCategory category) {
  switch (category) {
    case baton::ErrorCategory::kInvalidArgument:
      return BATON_ERROR_INVALID_ARGUMENT;
    case baton::ErrorCategory::kInvalidModel:
      return BATON_ERROR_INVALID_MODEL;
    case baton::ErrorCategory::kUnsupported:
      return BATON_ERROR_UNSUPPORTED;
    case baton::ErrorCategory::kBackend:
      return BATON_ERROR_BACKEND;
    case baton::ErrorCategory::kIo:
      return BATON_ERROR_IO;
    case baton::ErrorCategory::kOutOfMemory:
      return BATON_ERROR_OUT_OF_MEMORY;
    case baton::ErrorCategory::kInternal:
      return BATON_ERROR_INTERNAL;
  }
  return BATON_ERROR_INTERNAL;
}

// The GBNF grammar of the one constraint set in `p`, or "" for none.
std::string output_grammar(const baton_generation_params& p) {
  auto given = [](const char* text) { return text && *text; };
  if (int(given(p.grammar)) + int(given(p.json_schema)) + int(given(p.regex)) > 1) {
    throw baton::Error(baton::ErrorCategory::kInvalidArgument,
                       "set at most one of grammar, json_schema and regex");
  }
  if (given(p.json_schema)) return baton::json_schema_grammar(p.json_schema);
  if (given(p.regex)) return baton::regex_grammar(p.regex);
  return given(p.grammar) ? p.grammar : "";
}

// Runs `body`, turning any exception into a status and a thread-local message: no exception
// may cross into C.
template <typename Body>
baton_status guarded(Body&& body) {
  last_error.clear();
  try {
    body();
    return BATON_OK;
  } catch (const baton::Error& e) {
    last_error = e.what();
    return status_of(e.category());
  } catch (const std::bad_alloc&) {
    last_error = "out of memory";
    return BATON_ERROR_OUT_OF_MEMORY;
  } catch (const std::exception& e) {
    last_error = e.what();
    return BATON_ERROR_INTERNAL;
  }
}

}  // namespace

extern "C" {

baton_model_params baton_default_model_params(void) {
  const baton::LLMOptions defaults;
  return baton_model_params{.backend = nullptr,
                            .threads = defaults.threads,
                            .context_size = defaults.context_size,
                            .lora_adapters = nullptr,
                            .lora_adapter_count = 0,
                            .max_loras = defaults.max_loras,
                            .max_lora_rank = defaults.max_lora_rank};
}

baton_generation_params baton_default_generation_params(void) {
  const baton::GenerationParams defaults;
  const baton::SamplingParams& s = defaults.sampling;
  return baton_generation_params{.max_tokens = defaults.max_tokens,
                                 .temperature = s.temperature,
                                 .top_k = s.top_k,
                                 .top_p = s.top_p,
                                 .min_p = s.min_p,
                                 .repetition_penalty = s.repetition_penalty,
                                 .seed = s.seed,
                                 .lora = nullptr,
                                 .grammar = nullptr,
                                 .json_schema = nullptr,
                                 .regex = nullptr};
}

baton_status baton_model_open(const char* path, const baton_model_params* params,
                              baton_model** out_model) {
  return guarded([&] {
    if (!path || !out_model) {
      throw baton::Error(baton::ErrorCategory::kInvalidArgument,
                         "path and out_model must not be NULL");
    }
    const baton_model_params p = params ? *params : baton_default_model_params();
    baton::LLMOptions options;
    options.model = path;
    options.backend = p.backend ? p.backend : "";
    options.threads = p.threads;
    options.context_size = p.context_size;
    if (p.lora_adapter_count < 0 || (p.lora_adapter_count > 0 && !p.lora_adapters)) {
      throw baton::Error(baton::ErrorCategory::kInvalidArgument,
                         "lora_adapters must point at lora_adapter_count adapters");
    }
    for (int32_t i = 0; i < p.lora_adapter_count; ++i) {
      const baton_lora_adapter& adapter = p.lora_adapters[i];
      if (!adapter.name || !adapter.path) {
        throw baton::Error(baton::ErrorCategory::kInvalidArgument,
                           "LoRA adapter " + std::to_string(i) + " has no name or no path");
      }
      options.lora.push_back({.name = adapter.name, .path = adapter.path, .scale = adapter.scale});
    }
    options.max_loras = p.max_loras;
    if (p.max_lora_rank != 0) options.max_lora_rank = p.max_lora_rank;
    *out_model = new baton_model{baton::LLM(options)};
  });
}

void baton_model_free(baton_model* model) {
  delete model;
}

baton_status baton_generate(baton_model* model, const char* prompt,
                            const baton_generation_params* params, char** out_text,
                            size_t* out_token_count) {
  return guarded([&] {
    if (!model || !prompt || !out_text) {
      throw baton::Error(baton::ErrorCategory::kInvalidArgument,
                         "model, prompt and out_text must not be NULL");
    }
    const baton_generation_params p = params ? *params : baton_default_generation_params();
    baton::GenerationParams g;
    g.max_tokens = p.max_tokens;
    g.sampling.temperature = p.temperature;
    g.sampling.top_k = p.top_k;
    g.sampling.top_p = p.top_p;
    g.sampling.min_p = p.min_p;
    g.sampling.repetition_penalty = p.repetition_penalty;
    g.sampling.seed = p.seed;
    if (p.lora) g.lora = p.lora;
    g.grammar = output_grammar(p);
    const baton::GenerationOutput out = model->llm.generate(prompt, g);
    char* text = static_cast<char*>(std::malloc(out.text.size() + 1));
    if (!text) throw std::bad_alloc();
    std::memcpy(text, out.text.c_str(), out.text.size() + 1);
    *out_text = text;
    if (out_token_count) *out_token_count = out.tokens.size();
  });
}

void baton_string_free(char* text) {
  std::free(text);
}

const char* baton_last_error(void) {
  return last_error.c_str();
}

}  // extern "C"
