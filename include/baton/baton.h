#ifndef BATON_BATON_H_
#define BATON_BATON_H_

/* Baton's C API, for embedding from C and other languages.
 *
 * Every function that can fail returns a baton_status; on failure, baton_last_error() returns a
 * message naming the problem, valid on the calling thread until its next Baton call. Objects
 * returned through out-parameters are owned by the caller and released with the matching
 * baton_*_free function. */

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Exported from libbaton.so, which hides every symbol it does not declare public. */
#if defined(__GNUC__)
#pragma GCC visibility push(default)
#endif

typedef enum baton_status {
  BATON_OK = 0,
  BATON_ERROR_INVALID_ARGUMENT = 1, /* a bad parameter, or an empty or oversized prompt */
  BATON_ERROR_INVALID_MODEL = 2,    /* the model file is corrupt or inconsistent */
  BATON_ERROR_UNSUPPORTED = 3,      /* an architecture, dtype or feature Baton lacks */
  BATON_ERROR_BACKEND = 4,          /* the backend is unknown or unusable on this host */
  BATON_ERROR_IO = 5,               /* the file could not be opened or read */
  BATON_ERROR_OUT_OF_MEMORY = 6,
  BATON_ERROR_INTERNAL = 7,
} baton_status;

typedef struct baton_model baton_model;

/* A LoRA adapter served beside the base model (docs/lora.md). The LoRA fields were added to
 * baton_model_params and baton_generation_params after their first release: callers built
 * against the older header must be rebuilt, and should start from the baton_default_* values. */
typedef struct baton_lora_adapter {
  const char* name; /* what a request asks for it by (baton_generation_params.lora) */
  const char* path; /* a llama.cpp GGUF adapter file or a PEFT directory */
  float scale;      /* times the adapter's own alpha / r: 1 applies it as trained */
} baton_lora_adapter;

typedef struct baton_model_params {
  const char* backend;                     /* NULL or "" = $BATON_BACKEND or "cpu" */
  int32_t threads;                         /* 0 = all cores */
  int32_t context_size;                    /* 0 = the model's trained context, capped at 4096 */
  const baton_lora_adapter* lora_adapters; /* lora_adapter_count of them; NULL when none */
  int32_t lora_adapter_count;
  int32_t max_loras;     /* adapters one batch can mix; 0 = lora_adapter_count */
  int32_t max_lora_rank; /* highest rank served; 0 = 16 */
} baton_model_params;

typedef struct baton_generation_params {
  int32_t max_tokens;
  float temperature; /* <= 0: greedy */
  int32_t top_k;
  float top_p;
  float min_p;
  float repetition_penalty;
  uint64_t seed;
  const char* lora; /* the name of a LoRA adapter to generate with; NULL or "" = the base model */
  /* What the output must follow, at most one of the three; NULL or "" = unconstrained
   * (docs/structured-outputs.md): */
  const char* grammar;     /* a GBNF grammar, as llama.cpp writes them */
  const char* json_schema; /* a JSON Schema, as JSON text */
  const char* regex;       /* a regular expression the whole output matches */
} baton_generation_params;

baton_model_params baton_default_model_params(void);
baton_generation_params baton_default_generation_params(void);

/* Loads a GGUF model. On success *out_model is set; free it with baton_model_free. */
baton_status baton_model_open(const char* path, const baton_model_params* params,
                              baton_model** out_model);
void baton_model_free(baton_model* model);

/* Generates a continuation of `prompt`. On success *out_text is a NUL-terminated UTF-8 string
 * to release with baton_string_free, and *out_token_count (if not NULL) the tokens generated. */
baton_status baton_generate(baton_model* model, const char* prompt,
                            const baton_generation_params* params, char** out_text,
                            size_t* out_token_count);
void baton_string_free(char* text);

/* The message of the last failure on this thread, or "" if none. */
const char* baton_last_error(void);

#if defined(__GNUC__)
#pragma GCC visibility pop
#endif

#ifdef __cplusplus
}
#endif

#endif /* BATON_BATON_H_ */
